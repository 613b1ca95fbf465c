import type { Clock } from "@platform/kit/clock";
import { newId, parseId } from "@platform/kit/ids";
import { problem } from "@platform/kit/problems";
import { botProvider, botReport } from "../domain/bot.js";
import {
  type AccountFields,
  accountFields,
  type ChatFields,
  type ChunkFields,
  type ContactFields,
  chatFields,
  checkBatch,
  checkOrgId,
  chunkFields,
  contactFields,
} from "../domain/ingest.js";
import { accountChangedEvent, contactChangedEvent } from "../events/outbox-events.js";
import type { Store, TxStore } from "../store/index.js";
import type { Upserted } from "../store/records.store.js";

// Ingestion as the CRM sync and the recording bot drive it (the admin plane) and the sandbox
// seeds it: each call is one transaction, idempotent by the external keys.

/** How a new record gets its id: random, or derived (the sandbox's stable ids). */
export type IdFor = (crmId: string) => string;

/**
 * One batch of CRM records, checked as a whole and then upserted one at a time in input order;
 * `upsertOne` stores a record and announces it when it changed.
 */
async function upsertBatch<I, F extends { crmId: string }>(
  orgId: string,
  inputs: readonly I[],
  what: string,
  fieldsOf: (input: I) => F,
  upsertOne: (fields: F) => Promise<Upserted>,
): Promise<(Upserted & { crmId: string })[]> {
  checkOrgId(orgId);
  checkBatch(inputs.length, what);
  const out = [];
  for (const input of inputs) {
    const fields = fieldsOf(input);
    out.push({ crmId: fields.crmId, ...(await upsertOne(fields)) });
  }
  return out;
}

/** An ingest of one kind of CRM record; `idFor` names the records it creates. */
type UpsertRecords<I> = (
  w: TxStore,
  now: Date,
  orgId: string,
  inputs: readonly I[],
  idFor?: IdFor,
) => Promise<(Upserted & { crmId: string })[]>;

export const upsertAccounts: UpsertRecords<AccountFields> = (w, now, orgId, inputs, idFor = () => newId("acct_")) =>
  upsertBatch(orgId, inputs, "accounts", accountFields, async (fields) => {
    const upserted = await w.upsertAccount({ id: idFor(fields.crmId), orgId, ...fields }, now);
    if (upserted.changed) await w.enqueue(accountChangedEvent({ id: upserted.id, orgId, name: fields.name }, now));
    return upserted;
  });

export const upsertContacts: UpsertRecords<ContactFields> = (w, now, orgId, inputs, idFor = () => newId("cont_")) =>
  upsertBatch(orgId, inputs, "contacts", contactFields, async (fields) => {
    const upserted = await w.upsertContact({ id: idFor(fields.crmId), orgId, ...fields }, now);
    if (upserted.changed) {
      // Read back with its account resolved by CRM id, as every reader sees it.
      const view = await w.findContact(orgId, upserted.id);
      if (view) await w.enqueue(contactChangedEvent(view, now));
    }
    return upserted;
  });

export interface BotReportInput {
  orgId: string;
  meetingId: string;
  botId: string;
  ownerUserId: string;
  status: string;
  startedAt: Date | undefined;
  endedAt: Date | undefined;
  joinUrl: string;
  provider: string;
  recordingAvailable: boolean;
  errorReason: string;
  /** For meetings scheduling never announced. */
  meeting?: { title: string; start: Date; end: Date };
}

/** Stores a bot report; the meeting must be known (from scheduling, or described by the report). */
export async function reportBot(w: TxStore, now: Date, r: BotReportInput) {
  const orgId = checkOrgId(r.orgId);
  const meetingId = parseId("mtg_", r.meetingId, "meetingId");
  const botId = parseId("trs_", r.botId, "botId");
  if (r.ownerUserId !== "") parseId("usr_", r.ownerUserId, "ownerUserId");
  const { status, errorReason } = botReport(r.status, r.errorReason);
  const provider = botProvider(r.provider);
  if (r.meeting) {
    if (r.meeting.end < r.meeting.start) {
      throw problem("invalid-field", "The meeting cannot end before it starts.", { field: "meetingEndTime" });
    }
    await w.noteBotMeeting({ id: meetingId, orgId, ...r.meeting, title: r.meeting.title || "Meeting" });
  }
  if (!(await w.findMeeting(orgId, meetingId))) {
    throw problem("meeting-not-found", `Meeting ${meetingId} is unknown; describe it in the report.`);
  }
  const existing = await w.findBot(orgId, meetingId);
  if (existing && existing.botId !== botId) {
    throw problem("invalid-field", `Meeting ${meetingId} is recorded by bot ${existing.botId}.`, { field: "botId" });
  }
  await w.upsertBot(
    {
      meetingId,
      orgId,
      botId,
      ownerUserId: r.ownerUserId,
      status,
      startedAt: r.startedAt ?? null,
      endedAt: r.endedAt ?? null,
      joinUrl: r.joinUrl,
      provider,
      recordingAvailable: r.recordingAvailable,
      errorReason,
    },
    now,
  );
  const bot = await w.findBot(orgId, meetingId);
  if (!bot) throw new Error("bot not stored");
  return bot;
}

async function botOf(w: TxStore, orgId: string, rawMeetingId: string) {
  checkOrgId(orgId);
  const meetingId = parseId("mtg_", rawMeetingId, "meetingId");
  const bot = await w.findBot(orgId, meetingId);
  if (!bot) throw problem("bot-not-configured", `Report the bot of meeting ${meetingId} before its content.`);
  return bot;
}

export async function appendChunks(w: TxStore, orgId: string, meetingId: string, inputs: readonly ChunkFields[]) {
  checkBatch(inputs.length, "chunks");
  const bot = await botOf(w, orgId, meetingId);
  const chunks = inputs.map((c) => ({ ...chunkFields(c), meetingId: bot.meetingId }));
  const appended = await w.appendChunks(orgId, chunks);
  const total = (await w.findBot(orgId, bot.meetingId))?.chunkCount ?? 0;
  return { appended, total };
}

export async function appendChat(w: TxStore, orgId: string, meetingId: string, inputs: readonly ChatFields[]) {
  checkBatch(inputs.length, "messages");
  const bot = await botOf(w, orgId, meetingId);
  const messages = inputs.map((m) => ({ ...chatFields(m), meetingId: bot.meetingId }));
  return { appended: await w.appendChat(orgId, messages) };
}

/** The store's transaction with the clock's now, for the admin handlers. */
export const ingestTx = <T>(store: Store, clock: Clock, fn: (w: TxStore, now: Date) => Promise<T>): Promise<T> =>
  store.tx((w) => fn(w, clock.now()));
