import type { Clock } from "@platform/kit/clock";
import type { RequestContext } from "@platform/kit/context";
import { findById, isId, newId } from "@platform/kit/ids";
import type { Page } from "@platform/kit/pagination";
import { problem } from "@platform/kit/problems";
import { type CustomFields, mergeCustomFields } from "../domain/custom-fields.js";
import { type AmountInput, checkAgainstSchema } from "../domain/deal-input.js";
import { type DealSchemaRecord, isTerminal, schemaVersionAfterUpdate } from "../domain/deal-schema.js";
import type { DealRecord, InsightRecordRow, MeetingRecord } from "../domain/model.js";
import { dealCreatedEvent, dealUpdatedEvent } from "../events/outbox-events.js";
import { dealMessage, insightIdsOf } from "../messages.js";
import type { DealNames } from "../store/deal-names.store.js";
import type { Store, TxStore } from "../store/index.js";
import type { CrmReferences, Directory } from "./references.js";

// The deal use cases: creating and changing a deal (its references resolved in crm-data and
// identity before the write, then checked against its schema in it), and the meetings linked
// to a deal. The handlers map the RPCs onto these and open the write the call's key guards.

export const dealNotFound = (id: string) => problem("deal-not-found", `Deal ${id} was not found.`);
const accountNotFound = (id: string) => problem("account-not-found", `Account ${id} was not found.`);
const contactNotFound = (id: string) => problem("contact-not-found", `Contact ${id} was not found.`);

/** A deal of the org; another org's is as absent as an unknown one. */
export function visibleDeal(reads: Pick<TxStore, "findDeal">, orgId: string, rawId: string) {
  return findById("deal_", rawId, "dealId", (id) => reads.findDeal(orgId, id), dealNotFound);
}

/** The deal, locked until the transaction ends, or its 404. */
export async function lockedDeal(w: Pick<TxStore, "lockDeal">, orgId: string, id: string) {
  const deal = await w.lockDeal(orgId, id);
  if (!deal) throw dealNotFound(id);
  return deal;
}

/** The deal a PATCH may change: it exists in the org (404) and is not Won or Lost (409). */
export function writableDeal(deal: DealRecord | undefined, id: string): DealRecord {
  if (!deal) throw dealNotFound(id);
  if (isTerminal(deal.outcome)) {
    throw problem("deal-closed", `Deal ${id} is ${deal.stage} and can no longer change.`, { stage: deal.stage });
  }
  return deal;
}

async function schemaFor(w: TxStore, orgId: string, schemaId: string | undefined): Promise<DealSchemaRecord> {
  return schemaFound(schemaId ? await w.findSchema(orgId, schemaId) : await w.defaultSchema(orgId), schemaId);
}

/** The schema a deal names (`schemaId`), or the org's default, as read; schema-not-found when there is none. */
export function schemaFound(schema: DealSchemaRecord | undefined, schemaId: string | undefined): DealSchemaRecord {
  if (!schema) {
    throw problem(
      "schema-not-found",
      schemaId ? `Deal schema ${schemaId} was not found.` : "The organization has no default deal schema.",
    );
  }
  return schema;
}

const amountInputOf = (stored: DealRecord["amount"]): AmountInput | null =>
  stored && { ...(stored.value !== null ? { value: stored.value } : {}), currency: stored.currency };

const storedAmount = (a: AmountInput | null): DealRecord["amount"] =>
  a && a.currency !== "" ? { value: a.value ?? null, currency: a.currency } : null;

/** The CRM reference after a PATCH: a new id drops the old link unless the patch brings one. */
function crmRefAfter(
  current: DealRecord["crm"],
  req: { crmSourceId?: string | undefined; crmSourceUrl?: string | undefined },
): DealRecord["crm"] {
  if (req.crmSourceId !== undefined) return { id: req.crmSourceId, url: req.crmSourceUrl ?? null };
  if (!current) return null;
  return { id: current.id, url: req.crmSourceUrl ?? current.url };
}

/**
 * Who may appear on a deal: accounts, contacts and owners as crm-data and identity know them,
 * for the caller's org. `known`: what one query of revenue's projections already found
 * (`findDealNames`); only the rest is looked up one by one (and read through to its owner).
 */
export function dealReferences(
  crm: CrmReferences,
  directory: Directory,
  caller: RequestContext,
  known?: Pick<DealNames, "account" | "contact" | "owner">,
) {
  return {
    async account(id: string) {
      if (known?.account?.id === id) return known.account;
      const found = isId("acct_", id) ? await crm.account(caller, id) : undefined;
      if (!found) throw accountNotFound(id);
      return found;
    },
    async contact(id: string) {
      const found =
        known?.contact?.id === id ? known.contact : isId("cont_", id) ? await crm.contact(caller, id) : undefined;
      if (!found) throw contactNotFound(id);
      return { id: found.id, displayName: found.displayName };
    },
    async owner(id: string | undefined) {
      // `known.owner` answers the same question: the user named, or the administrator when none is.
      if (known?.owner && (id === undefined || known.owner.userId === id)) return known.owner;
      if (id === undefined) return directory.administrator(caller);
      const found = isId("usr_", id) ? await directory.user(caller, id) : undefined;
      if (!found) throw problem("user-not-found", `User ${id} was not found.`);
      return found;
    },
  };
}

/** The deal message with the ids of its insight records. */
export async function dealDetail(reads: Pick<TxStore, "listDealInsights">, deal: DealRecord) {
  return detailOf(deal, await reads.listDealInsights(deal.id));
}

const detailOf = (deal: DealRecord, insights: InsightRecordRow[]) =>
  dealMessage(deal, { insightIds: insightIdsOf(insights) });

/** What a deal use case reads besides its own store: revenue's projections, crm-data and identity. */
export interface DealReads {
  store: Pick<Store, "findDeal" | "findDealNames">;
  crm: CrmReferences;
  directory: Directory;
  clock: Clock;
}

/**
 * The write a use case's change goes out in, opened by the caller for the call (once per
 * Idempotency-Key): `change` runs in it, and what the write answers is the use case's answer.
 */
export type WriteWith<W, R> = (change: (w: W) => Promise<{ deal: ReturnType<typeof dealMessage> }>) => Promise<R>;

/** A new deal as the call names it: its references by id, its schema by id or the org's default. */
export interface NewDeal extends Omit<CreateDeal, "schema" | "account" | "owner" | "primaryContact"> {
  schemaId: string | undefined;
  accountId: string;
  primaryContactId: string | undefined;
  ownerId: string | undefined;
}

/**
 * Creates a deal. Its references and its schema are looked up before the write, which then
 * only inserts: from revenue's projections in one query, or (an id they have not seen) from
 * other services, whose calls no transaction waits on.
 */
export async function createDeal<R>(
  reads: DealReads,
  caller: RequestContext,
  cmd: NewDeal,
  write: WriteWith<Pick<TxStore, "insertDeal" | "enqueue">, R>,
): Promise<R> {
  const { schemaId, accountId, primaryContactId, ownerId, ...fields } = cmd;
  const named = await reads.store.findDealNames(cmd.orgId, {
    accountId,
    contactId: primaryContactId,
    ownerId,
    schemaId,
  });
  const refs = dealReferences(reads.crm, reads.directory, caller, named);
  const account = await refs.account(accountId);
  const primaryContact = primaryContactId !== undefined ? await refs.contact(primaryContactId) : null;
  const owner = await refs.owner(ownerId);
  const schema = schemaFound(named.schema, schemaId);
  return write((w) => insertDeal(w, { ...fields, schema, account, owner, primaryContact }, reads.clock.now()));
}

/** A PATCH of a deal as the call names it: its references by id; `clearPrimaryContact` removes the contact. */
export interface DealChange extends Omit<UpdateDeal, "account" | "owner" | "primaryContact"> {
  accountId: string | undefined;
  primaryContactId: string | undefined;
  ownerId: string | undefined;
  clearPrimaryContact: boolean;
}

/**
 * Changes a deal. A change that names references is first checked against the deal as read
 * (an unknown deal is its 404 and a Won/Lost one its 409 whatever else it names, and neither
 * costs a call to crm-data or identity), after `replay` (the answer a repeated key already
 * has, without asking other services again). The write checks the deal again under its row lock,
 * since it may close in between. Without references both checks happen in the write alone (the
 * key's claim replays, the row lock finds the deal): two round trips fewer for the common update.
 */
export async function changeDeal<R>(
  reads: DealReads,
  caller: RequestContext,
  cmd: DealChange,
  replay: () => Promise<R | undefined>,
  write: WriteWith<TxStore, R>,
): Promise<R> {
  const { accountId, primaryContactId, ownerId, clearPrimaryContact, ...fields } = cmd;
  if (accountId !== undefined || primaryContactId !== undefined || ownerId !== undefined) {
    const replayed = await replay();
    if (replayed) return replayed;
    writableDeal(await reads.store.findDeal(cmd.orgId, cmd.id), cmd.id);
  }
  const refs = dealReferences(reads.crm, reads.directory, caller);
  const account = accountId !== undefined ? await refs.account(accountId) : undefined;
  const contact = primaryContactId !== undefined ? await refs.contact(primaryContactId) : undefined;
  const owner = ownerId !== undefined ? await refs.owner(ownerId) : undefined;
  return write((w) =>
    updateDeal(
      w,
      { ...fields, account, owner, primaryContact: clearPrimaryContact ? null : contact },
      reads.clock.now(),
    ),
  );
}

/** A new deal; its references and its schema were looked up before the write. */
export interface CreateDeal {
  orgId: string;
  name: string;
  stage: string;
  amount: AmountInput | null;
  closeDate: string | null;
  /** The schema the deal names, or the org's default (`schemaFor`). */
  schema: DealSchemaRecord;
  customFields: CustomFields;
  crm: DealRecord["crm"];
  account: DealRecord["account"];
  owner: DealRecord["owner"];
  primaryContact: DealRecord["primaryContact"];
}

/**
 * Creates the deal under its schema and enqueues deal.created: writes only, so the deal, its
 * event and the key's record go to Postgres as one statement. The schema was read before,
 * outside the write, as a transaction under READ COMMITTED would have read it: an edit
 * committed meanwhile is not seen either way (a deal records the version it was checked against).
 */
async function insertDeal(w: Pick<TxStore, "insertDeal" | "enqueue">, cmd: CreateDeal, now: Date) {
  const { customFields, amount, schema } = cmd;
  if (Object.values(customFields).some((v) => v === null)) {
    throw problem("schema-mismatch", "customFields values cannot be null on create.");
  }
  const checked = checkAgainstSchema(schema, { stage: cmd.stage, amount, customFields });
  if ("mismatch" in checked) throw problem("schema-mismatch", checked.mismatch);
  const deal: DealRecord = {
    id: newId("deal_"),
    orgId: cmd.orgId,
    name: cmd.name,
    stage: checked.stage.name,
    outcome: checked.stage.outcome,
    amount: storedAmount(amount),
    closeDate: cmd.closeDate,
    account: cmd.account,
    owner: cmd.owner,
    primaryContact: cmd.primaryContact,
    schemaId: schema.id,
    schemaVersion: schema.version,
    customFields,
    crm: cmd.crm,
    createdAt: now,
    updatedAt: now,
  };
  await w.insertDeal(deal);
  const message = dealMessage(deal, { insightIds: {} });
  await w.enqueue(dealCreatedEvent({ ...message, id: deal.id, orgId: cmd.orgId }, now));
  return { deal: message };
}

/** A PATCH of a deal: undefined keeps a value, null clears it. */
export interface UpdateDeal {
  orgId: string;
  id: string;
  name: string | undefined;
  stage: string | undefined;
  amount: AmountInput | null | undefined;
  closeDate: string | null | undefined;
  schemaId: string | undefined;
  customFieldsPatch: CustomFields;
  crm: { crmSourceId?: string | undefined; crmSourceUrl?: string | undefined };
  account: DealRecord["account"] | undefined;
  owner: DealRecord["owner"] | undefined;
  primaryContact: DealRecord["primaryContact"] | undefined;
}

/** Changes the deal under the row lock, checks it against its schema again, and enqueues deal.updated. */
async function updateDeal(w: TxStore, cmd: UpdateDeal, now: Date) {
  const { orgId, id } = cmd;
  const locked = await w.lockDealForUpdate(orgId, id);
  const current = writableDeal(locked?.deal, id);
  const schemaId = cmd.schemaId ?? current.schemaId;
  const schema = locked?.schema && locked.schema.id === schemaId ? locked.schema : await schemaFor(w, orgId, schemaId);
  const amount = cmd.amount === undefined ? amountInputOf(current.amount) : cmd.amount;
  const customFields = mergeCustomFields(current.customFields, cmd.customFieldsPatch);
  const checked = checkAgainstSchema(schema, { stage: cmd.stage ?? current.stage, amount, customFields });
  if ("mismatch" in checked) throw problem("schema-mismatch", checked.mismatch);
  const deal: DealRecord = {
    ...current,
    name: cmd.name ?? current.name,
    stage: checked.stage.name,
    outcome: checked.stage.outcome,
    amount: storedAmount(amount),
    closeDate: cmd.closeDate === undefined ? current.closeDate : cmd.closeDate,
    account: cmd.account ?? current.account,
    owner: cmd.owner ?? current.owner,
    primaryContact: cmd.primaryContact === undefined ? current.primaryContact : cmd.primaryContact,
    schemaId: schema.id,
    schemaVersion: schemaVersionAfterUpdate(schema),
    customFields,
    crm: crmRefAfter(current.crm, cmd.crm),
    updatedAt: now,
  };
  await w.updateDeal(deal);
  // Insight records are appended under this same row lock, so those read with it are current.
  const message = detailOf(deal, locked?.insights ?? []);
  await w.enqueue(dealUpdatedEvent({ ...message, id: deal.id, orgId }, current.stage, now));
  return { deal: message };
}

/**
 * The link rule, resolved now: a meeting belongs to the deal when one of its attendees is a
 * contact of the deal's account. Resolving at read time makes it independent of whether the
 * contact or the meeting reached us first; the meetings are then found by those emails
 * through the attendee index. `page` reads one page of the meetings of those emails.
 */
export async function dealMeetings(
  crm: CrmReferences,
  caller: RequestContext,
  deal: DealRecord,
  page: (emails: string[]) => Promise<Page<MeetingRecord>>,
) {
  const emails = await crm.accountContactEmails(caller, deal.account.id);
  const found: Page<MeetingRecord> = emails.length === 0 ? { items: [], nextCursor: null } : await page(emails);
  const transcripts =
    found.items.length > 0
      ? await crm.withTranscript(
          caller,
          found.items.map((m) => m.id),
        )
      : new Set<string>();
  return { ...found, transcripts };
}
