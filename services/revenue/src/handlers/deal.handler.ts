import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { meetingStatus } from "@platform/contracts/rest/meeting";
import { DealService, type Money } from "@platform/contracts/revenue";
import { apiContext, requestContext } from "@platform/kit/connect";
import type { CursorCodec } from "@platform/kit/cursor";
import { orReplayMethod, replayOfMethod } from "@platform/kit/idempotent-method";
import { parseId } from "@platform/kit/ids";
import { keysetPage } from "@platform/kit/keyset";
import { parseSort } from "@platform/kit/pagination";
import { problem } from "@platform/kit/problems";
import { changeDeal, createDeal, dealDetail, dealMeetings, dealReferences, visibleDeal } from "../application/deals.js";
import type { CrmReferences, Directory } from "../application/references.js";
import { idempotentInsert, idempotentWrite, type WriteDeps } from "../application/write.js";
import type { AmountInput } from "../domain/deal-input.js";
import { dealMessage, jsonOfStruct } from "../messages.js";
import { DEAL_SORT_KEYS, type DealListFilter } from "../store/deal.store.js";
import type { Store } from "../store/index.js";
import { MEETING_SORT_KEYS } from "../store/meeting.store.js";

export interface DealDeps extends WriteDeps {
  store: Store;
  cursors: CursorCodec;
  crm: CrmReferences;
  directory: Directory;
}

const DEAL_SORTS = Object.keys(DEAL_SORT_KEYS);

const amountOf = (m: Money | undefined): AmountInput | null =>
  m ? { ...(m.value !== undefined ? { value: m.value } : {}), currency: m.currency } : null;

const filterOf = (
  f:
    | {
        search: string;
        accountId: string;
        stages: string[];
        ownerUserId: string;
        closingBefore: string;
        closingAfter: string;
      }
    | undefined,
): DealListFilter => ({
  search: f?.search ?? "",
  accountId: f?.accountId ?? "",
  stages: f?.stages ?? [],
  ownerUserId: f?.ownerUserId ?? "",
  closingBefore: f?.closingBefore ?? "",
  closingAfter: f?.closingAfter ?? "",
});

/** Deals: list, read, create, update, and the meetings linked to them. */
export function dealHandlers(deps: DealDeps): ServiceImpl<typeof DealService> {
  const { store, clock, cursors, crm } = deps;

  async function list(orgId: string, req: { cursor: string; limit: number; sort: string }, filter: DealListFilter) {
    const sort = parseSort(req.sort, DEAL_SORTS, "-updatedAt");
    const page = await keysetPage(cursors, DEAL_SORT_KEYS, sort, req, (query) => store.listDeals(orgId, filter, query));
    return { deals: page.items.map((d) => dealMessage(d, "list")), nextCursor: page.nextCursor ?? "" };
  }

  return {
    async listDeals(req, ctx) {
      const { orgId } = apiContext(ctx);
      return list(orgId, req, filterOf(req.filter));
    },

    async listAccountDeals(req, ctx) {
      const { orgId } = apiContext(ctx);
      const accountId = parseId("acct_", req.accountId, "accountId");
      await dealReferences(crm, deps.directory, requestContext(ctx)).account(accountId);
      return list(orgId, req, { ...filterOf(req.filter), accountId });
    },

    async getDeal(req, ctx) {
      const { orgId } = apiContext(ctx);
      return { deal: await dealDetail(store, await visibleDeal(store, orgId, req.dealId)) };
    },

    async getDealBySource(req, ctx) {
      const { orgId } = apiContext(ctx);
      // Unknown pairs, other orgs' and unsupported source types all answer the same.
      const deal =
        req.sourceType === "crm" && req.sourceId ? await store.findDealByCrmId(orgId, req.sourceId) : undefined;
      if (!deal) throw problem("deal-not-found", "No deal has that source reference.");
      return { deal: await dealDetail(store, deal) };
    },

    createDeal: (req, ctx) =>
      // A replay answers what it answered first, even where the checks below would now fail.
      orReplayMethod(deps, ctx, DealService.method.createDeal, req, () =>
        createDeal(
          deps,
          requestContext(ctx),
          {
            orgId: apiContext(ctx).orgId,
            name: req.name,
            stage: req.stage,
            amount: amountOf(req.amount),
            closeDate: req.closeDate ?? null,
            schemaId: req.schemaId,
            customFields: jsonOfStruct(req.customFields),
            crm: req.crmSourceId !== undefined ? { id: req.crmSourceId, url: req.crmSourceUrl ?? null } : null,
            accountId: req.accountId,
            primaryContactId: req.primaryContactId,
            ownerId: req.ownerId,
          },
          (insert) => idempotentInsert(deps, ctx, DealService.method.createDeal, req, insert),
        ),
      ),

    async updateDeal(req, ctx) {
      const { orgId } = apiContext(ctx);
      const id = parseId("deal_", req.dealId, "dealId");
      const cleared = new Set(req.clearedFields);
      return changeDeal(
        deps,
        requestContext(ctx),
        {
          orgId,
          id,
          name: req.name,
          stage: req.stage,
          amount: cleared.has("amount") ? null : req.amount ? amountOf(req.amount) : undefined,
          closeDate: cleared.has("closeDate") ? null : req.closeDate,
          schemaId: req.schemaId,
          customFieldsPatch: jsonOfStruct(req.customFields),
          crm: req,
          accountId: req.accountId,
          primaryContactId: req.primaryContactId,
          ownerId: req.ownerId,
          clearPrimaryContact: cleared.has("primaryContactId"),
        },
        () => replayOfMethod(deps, ctx, DealService.method.updateDeal, req),
        (update) => idempotentWrite(deps, ctx, DealService.method.updateDeal, req, update),
      );
    },

    async listDealMeetings(req, ctx) {
      const { orgId } = apiContext(ctx);
      const deal = await visibleDeal(store, orgId, req.dealId);
      const sort = parseSort(req.sort, ["startTime"], "-startTime");
      const since = req.since ? timestampDate(req.since) : undefined;
      const page = await dealMeetings(crm, requestContext(ctx), deal, (emails) =>
        keysetPage(cursors, MEETING_SORT_KEYS, sort, req, (query) => store.listMeetingsOf(orgId, emails, since, query)),
      );
      const now = clock.now();
      return {
        meetings: page.items.map((m) => ({
          meetingId: m.id,
          title: m.title,
          startTime: timestampFromDate(m.start),
          endTime: timestampFromDate(m.end),
          status: meetingStatus(m, now),
          hasTranscript: page.transcripts.has(m.id),
        })),
        nextCursor: page.nextCursor ?? "",
      };
    },
  };
}
