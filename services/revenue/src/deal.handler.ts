import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { meetingStatus } from "@platform/contracts/rest/meeting";
import {
  CreateDealRequestSchema,
  CreateDealResponseSchema,
  type DealService,
  type Money,
  UpdateDealRequestSchema,
  UpdateDealResponseSchema,
} from "@platform/contracts/revenue";
import { apiContext, requestContext } from "@platform/kit/connect";
import type { CursorCodec } from "@platform/kit/cursor";
import { replayOf } from "@platform/kit/idempotent-rpc";
import { isId, newId, parseId } from "@platform/kit/ids";
import { keysetPage } from "@platform/kit/keyset";
import { parseSort } from "@platform/kit/pagination";
import { problem } from "@platform/kit/problems";
import { mergeCustomFields } from "./domain/custom-fields.js";
import type { AmountInput } from "./domain/deal-input.js";
import { checkAgainstSchema } from "./domain/deal-input.js";
import { type DealSchemaRecord, isTerminal, schemaVersionAfterUpdate } from "./domain/deal-schema.js";
import { dealCreatedEvent, dealUpdatedEvent } from "./events/outbox-events.js";
import type { DealRecord, MeetingRecord } from "./model.js";
import { dealMessage, insightIdsOf, jsonOfStruct } from "./proto.js";
import type { CrmReferences, Directory } from "./references.js";
import {
  DEAL_SORT_KEYS,
  type DealListFilter,
  MEETING_SORT_KEYS,
  type RevenueQueries,
  type RevenueStore,
} from "./store/revenue.store.js";
import { idempotentWrite, type WriteDeps } from "./write.js";

export interface DealDeps extends WriteDeps {
  store: RevenueStore;
  cursors: CursorCodec;
  crm: CrmReferences;
  directory: Directory;
}

const DEAL_SORTS = Object.keys(DEAL_SORT_KEYS);

export const dealNotFound = (id: string) => problem("deal-not-found", `Deal ${id} was not found.`);
const accountNotFound = (id: string) => problem("account-not-found", `Account ${id} was not found.`);
const contactNotFound = (id: string) => problem("contact-not-found", `Contact ${id} was not found.`);

/** A deal of the org; another org's is as absent as an unknown one. */
export async function visibleDeal(reads: Pick<RevenueQueries, "findDeal">, orgId: string, rawId: string) {
  const id = parseId("deal_", rawId, "dealId");
  const deal = await reads.findDeal(orgId, id);
  if (!deal) throw dealNotFound(id);
  return deal;
}

/** The deal a PATCH may change: it exists in the org (404) and is not Won or Lost (409). */
function writableDeal(deal: DealRecord | undefined, id: string): DealRecord {
  if (!deal) throw dealNotFound(id);
  if (isTerminal(deal.outcome)) {
    throw problem("deal-closed", `Deal ${id} is ${deal.stage} and can no longer change.`, { stage: deal.stage });
  }
  return deal;
}

async function schemaFor(w: RevenueQueries, orgId: string, schemaId: string | undefined): Promise<DealSchemaRecord> {
  const schema = schemaId ? await w.findSchema(orgId, schemaId) : await w.defaultSchema(orgId);
  if (!schema) {
    throw problem(
      "schema-not-found",
      schemaId ? `Deal schema ${schemaId} was not found.` : "The organization has no default deal schema.",
    );
  }
  return schema;
}

const amountOf = (m: Money | undefined): AmountInput | null =>
  m ? { ...(m.value !== undefined ? { value: m.value } : {}), currency: m.currency } : null;

const amountInputOf = (stored: DealRecord["amount"]): AmountInput | null =>
  stored && { ...(stored.value !== null ? { value: stored.value } : {}), currency: stored.currency };

/** The CRM reference after a PATCH: a new id drops the old link unless the patch brings one. */
function crmRefAfter(
  current: DealRecord["crm"],
  req: { crmSourceId?: string | undefined; crmSourceUrl?: string | undefined },
): DealRecord["crm"] {
  if (req.crmSourceId !== undefined) return { id: req.crmSourceId, url: req.crmSourceUrl ?? null };
  if (!current) return null;
  return { id: current.id, url: req.crmSourceUrl ?? current.url };
}

const storedAmount = (a: AmountInput | null): DealRecord["amount"] =>
  a && a.currency !== "" ? { value: a.value ?? null, currency: a.currency } : null;

/** Who may appear on a deal: accounts, contacts and owners as crm-data and identity know them, for the caller's org. */
function references(deps: DealDeps, ctx: HandlerContext) {
  const caller = requestContext(ctx);
  return {
    async account(id: string) {
      const found = isId("acct_", id) ? await deps.crm.account(caller, id) : undefined;
      if (!found) throw accountNotFound(id);
      return found;
    },
    async contact(id: string) {
      const found = isId("cont_", id) ? await deps.crm.contact(caller, id) : undefined;
      if (!found) throw contactNotFound(id);
      return { id: found.id, displayName: found.displayName };
    },
    async owner(id: string | undefined) {
      if (id === undefined) return deps.directory.administrator(caller);
      const found = isId("usr_", id) ? await deps.directory.user(caller, id) : undefined;
      if (!found) throw problem("user-not-found", `User ${id} was not found.`);
      return found;
    },
  };
}

/** Deals: list, read, create, update, and the meetings linked to them. */
export function dealHandlers(deps: DealDeps): ServiceImpl<typeof DealService> {
  const { store, clock, cursors, crm } = deps;

  async function detail(deal: DealRecord, reads: Pick<RevenueQueries, "listDealInsights"> = store) {
    return dealMessage(deal, { insightIds: insightIdsOf(await reads.listDealInsights(deal.id)) });
  }

  async function list(orgId: string, req: { cursor: string; limit: number; sort: string }, filter: DealListFilter) {
    const sort = parseSort(req.sort, DEAL_SORTS, "-updatedAt");
    const page = await keysetPage(cursors, DEAL_SORT_KEYS, sort, req, (query) => store.listDeals(orgId, filter, query));
    return { deals: page.items.map((d) => dealMessage(d, "list")), nextCursor: page.nextCursor ?? "" };
  }

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

  return {
    async listDeals(req, ctx) {
      const { orgId } = apiContext(ctx);
      return list(orgId, req, filterOf(req.filter));
    },

    async listAccountDeals(req, ctx) {
      const { orgId } = apiContext(ctx);
      const accountId = parseId("acct_", req.accountId, "accountId");
      await references(deps, ctx).account(accountId);
      return list(orgId, req, { ...filterOf(req.filter), accountId });
    },

    async getDeal(req, ctx) {
      const { orgId } = apiContext(ctx);
      return { deal: await detail(await visibleDeal(store, orgId, req.dealId)) };
    },

    async getDealBySource(req, ctx) {
      const { orgId } = apiContext(ctx);
      // Unknown pairs, other orgs' and unsupported source types all answer the same.
      const deal =
        req.sourceType === "crm" && req.sourceId ? await store.findDealByCrmId(orgId, req.sourceId) : undefined;
      if (!deal) throw problem("deal-not-found", "No deal has that source reference.");
      return { deal: await detail(deal) };
    },

    async createDeal(req, ctx) {
      // A replay answers what it answered first, without asking other services again.
      const replay = await replayOf(
        deps,
        ctx,
        { schema: CreateDealRequestSchema, message: req },
        CreateDealResponseSchema,
      );
      if (replay) return replay;
      const { orgId } = apiContext(ctx);
      // Looked up before the transaction: the answers come from other services, and a write
      // transaction is not held open across their calls.
      const refs = references(deps, ctx);
      const account = await refs.account(req.accountId);
      const primaryContact = req.primaryContactId !== undefined ? await refs.contact(req.primaryContactId) : null;
      const owner = await refs.owner(req.ownerId);
      const customFields = jsonOfStruct(req.customFields);
      return idempotentWrite(
        deps,
        ctx,
        { schema: CreateDealRequestSchema, message: req },
        CreateDealResponseSchema,
        async (w) => {
          const now = clock.now();
          const schema = await schemaFor(w, orgId, req.schemaId);
          const amount = amountOf(req.amount);
          if (Object.values(customFields).some((v) => v === null)) {
            throw problem("schema-mismatch", "customFields values cannot be null on create.");
          }
          const checked = checkAgainstSchema(schema, { stage: req.stage, amount, customFields });
          if ("mismatch" in checked) throw problem("schema-mismatch", checked.mismatch);
          const deal: DealRecord = {
            id: newId("deal_"),
            orgId,
            name: req.name,
            stage: checked.stage.name,
            outcome: checked.stage.outcome,
            amount: storedAmount(amount),
            closeDate: req.closeDate ?? null,
            account,
            owner,
            primaryContact,
            schemaId: schema.id,
            schemaVersion: schema.version,
            customFields,
            crm: req.crmSourceId !== undefined ? { id: req.crmSourceId, url: req.crmSourceUrl ?? null } : null,
            createdAt: now,
            updatedAt: now,
          };
          await w.insertDeal(deal);
          const message = dealMessage(deal, { insightIds: {} });
          await w.enqueue(dealCreatedEvent({ ...message, id: deal.id, orgId }, now));
          return { deal: message };
        },
      );
    },

    async updateDeal(req, ctx) {
      // A replay answers what it answered first, without asking other services again.
      const replay = await replayOf(
        deps,
        ctx,
        { schema: UpdateDealRequestSchema, message: req },
        UpdateDealResponseSchema,
      );
      if (replay) return replay;
      const { orgId } = apiContext(ctx);
      const id = parseId("deal_", req.dealId, "dealId");
      // The deal first: an unknown deal is its 404 and a Won/Lost one its 409 whatever else the
      // body names, and neither costs a call to crm-data or identity. The transaction checks
      // both again under the row lock, since the deal may close in between.
      writableDeal(await store.findDeal(orgId, id), id);
      const refs = references(deps, ctx);
      const account = req.accountId !== undefined ? await refs.account(req.accountId) : undefined;
      const cleared = new Set(req.clearedFields);
      const contact = req.primaryContactId !== undefined ? await refs.contact(req.primaryContactId) : undefined;
      const owner = req.ownerId !== undefined ? await refs.owner(req.ownerId) : undefined;
      const patchFields = jsonOfStruct(req.customFields);
      return idempotentWrite(
        deps,
        ctx,
        { schema: UpdateDealRequestSchema, message: req },
        UpdateDealResponseSchema,
        async (w) => {
          const now = clock.now();
          const current = writableDeal(await w.lockDeal(orgId, id), id);
          const schema = await schemaFor(w, orgId, req.schemaId ?? current.schemaId);
          const amount = cleared.has("amount")
            ? null
            : req.amount
              ? amountOf(req.amount)
              : amountInputOf(current.amount);
          const customFields = mergeCustomFields(current.customFields, patchFields);
          const checked = checkAgainstSchema(schema, { stage: req.stage ?? current.stage, amount, customFields });
          if ("mismatch" in checked) throw problem("schema-mismatch", checked.mismatch);
          const deal: DealRecord = {
            ...current,
            name: req.name ?? current.name,
            stage: checked.stage.name,
            outcome: checked.stage.outcome,
            amount: storedAmount(amount),
            closeDate: cleared.has("closeDate") ? null : (req.closeDate ?? current.closeDate),
            account: account ?? current.account,
            owner: owner ?? current.owner,
            primaryContact: cleared.has("primaryContactId") ? null : (contact ?? current.primaryContact),
            schemaId: schema.id,
            schemaVersion: schemaVersionAfterUpdate(schema),
            customFields,
            crm: crmRefAfter(current.crm, req),
            updatedAt: now,
          };
          await w.updateDeal(deal);
          const message = await detail(deal, w);
          await w.enqueue(dealUpdatedEvent({ ...message, id: deal.id, orgId }, current.stage, now));
          return { deal: message };
        },
      );
    },

    async listDealMeetings(req, ctx) {
      const { orgId } = apiContext(ctx);
      const deal = await visibleDeal(store, orgId, req.dealId);
      const caller = requestContext(ctx);
      const sort = parseSort(req.sort, ["startTime"], "-startTime");
      // The link rule, resolved now: a meeting belongs to the deal when one of its attendees
      // is a contact of the deal's account. Resolving at read time makes it independent of
      // whether the contact or the meeting reached us first; the meetings are then found by
      // those emails through the attendee index.
      const emails = await crm.accountContactEmails(caller, deal.account.id);
      const since = req.since ? timestampDate(req.since) : undefined;
      const page =
        emails.length === 0
          ? { items: [] as MeetingRecord[], nextCursor: null }
          : await keysetPage(cursors, MEETING_SORT_KEYS, sort, req, (query) =>
              store.listMeetingsOf(orgId, emails, since, query),
            );
      const transcripts =
        page.items.length > 0
          ? await crm.withTranscript(
              caller,
              page.items.map((m) => m.id),
            )
          : new Set<string>();
      const now = clock.now();
      return {
        meetings: page.items.map((m) => ({
          meetingId: m.id,
          title: m.title,
          startTime: timestampFromDate(m.start),
          endTime: timestampFromDate(m.end),
          status: meetingStatus(m, now),
          hasTranscript: transcripts.has(m.id),
        })),
        nextCursor: page.nextCursor ?? "",
      };
    },
  };
}
