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
import {
  createDeal,
  dealDetail,
  dealMeetings,
  dealReferences,
  schemaFound,
  updateDeal,
  visibleDeal,
  writableDeal,
} from "../application/deals.js";
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
      orReplayMethod(deps, ctx, DealService.method.createDeal, req, async () => {
        const { orgId } = apiContext(ctx);
        // Looked up before the write, which then only inserts: from revenue's projections in one
        // query, or (an id they have not seen) from other services, whose calls no transaction waits on.
        const named = await store.findDealNames(orgId, {
          accountId: req.accountId,
          contactId: req.primaryContactId,
          ownerId: req.ownerId,
          schemaId: req.schemaId,
        });
        const refs = dealReferences(crm, deps.directory, requestContext(ctx), named);
        const account = await refs.account(req.accountId);
        const primaryContact = req.primaryContactId !== undefined ? await refs.contact(req.primaryContactId) : null;
        const owner = await refs.owner(req.ownerId);
        const schema = schemaFound(named.schema, req.schemaId);
        const customFields = jsonOfStruct(req.customFields);
        return idempotentInsert(deps, ctx, DealService.method.createDeal, req, (w) =>
          createDeal(
            w,
            {
              orgId,
              name: req.name,
              stage: req.stage,
              amount: amountOf(req.amount),
              closeDate: req.closeDate ?? null,
              schema,
              customFields,
              crm: req.crmSourceId !== undefined ? { id: req.crmSourceId, url: req.crmSourceUrl ?? null } : null,
              account,
              owner,
              primaryContact,
            },
            clock.now(),
          ),
        );
      }),

    async updateDeal(req, ctx) {
      const { orgId } = apiContext(ctx);
      const id = parseId("deal_", req.dealId, "dealId");
      const namesReferences =
        req.accountId !== undefined || req.primaryContactId !== undefined || req.ownerId !== undefined;
      if (namesReferences) {
        // A replay answers what it answered first, without asking other services again.
        const replay = await replayOfMethod(deps, ctx, DealService.method.updateDeal, req);
        if (replay) return replay;
        // The deal first: an unknown deal is its 404 and a Won/Lost one its 409 whatever else the
        // body names, and neither costs a call to crm-data or identity. The transaction checks
        // both again under the row lock, since the deal may close in between.
        writableDeal(await store.findDeal(orgId, id), id);
      }
      // Without references both checks happen in the transaction alone (the key's claim replays,
      // the row lock finds the deal): two round trips fewer for the common update.
      const refs = dealReferences(crm, deps.directory, requestContext(ctx));
      const account = req.accountId !== undefined ? await refs.account(req.accountId) : undefined;
      const cleared = new Set(req.clearedFields);
      const contact = req.primaryContactId !== undefined ? await refs.contact(req.primaryContactId) : undefined;
      const owner = req.ownerId !== undefined ? await refs.owner(req.ownerId) : undefined;
      const customFieldsPatch = jsonOfStruct(req.customFields);
      return idempotentWrite(deps, ctx, DealService.method.updateDeal, req, (w) =>
        updateDeal(
          w,
          {
            orgId,
            id,
            name: req.name,
            stage: req.stage,
            amount: cleared.has("amount") ? null : req.amount ? amountOf(req.amount) : undefined,
            closeDate: cleared.has("closeDate") ? null : req.closeDate,
            schemaId: req.schemaId,
            customFieldsPatch,
            crm: req,
            account,
            owner,
            primaryContact: cleared.has("primaryContactId") ? null : contact,
          },
          clock.now(),
        ),
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
