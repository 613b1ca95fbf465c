import type { Timestamp } from "@bufbuild/protobuf/wkt";
import type {
  Account,
  ActivityItem,
  BotStatus,
  ChatMessage,
  Contact,
  Transcript,
  TranscriptChunk,
} from "@platform/contracts/crm";
import { iso, isoOrNull, timestampsJson } from "@platform/contracts/rest/json";
import { problem } from "@platform/kit/problems";
import { parseInstant } from "./time.js";

// crm-data's messages as the spec's JSON: explicit nulls for unset nullable fields, ISO 8601
// UTC times. Fields the contract always sets are a service bug when absent: a plain Error,
// which the error handler logs and answers with an opaque 500.

const orNull = <T>(v: T | undefined): T | null => v ?? null;

export function accountListJson(a: Account) {
  return {
    id: a.id,
    orgId: a.orgId,
    name: a.name,
    rootDomain: orNull(a.rootDomain),
    fullyQualifiedDomain: orNull(a.fullyQualifiedDomain),
    primaryIndustry: orNull(a.primaryIndustry),
    industries: a.industries,
    employeeCount: orNull(a.employeeCount),
    primaryLocation: orNull(a.primaryLocation),
    profileIconUri: orNull(a.profileIconUri),
    ...timestampsJson(a),
  };
}

export function accountJson(a: Account) {
  const round = a.funding?.lastRound;
  return {
    ...accountListJson(a),
    valuation: a.valuation
      ? { amount: a.valuation.amount, currency: a.valuation.currency, asOf: a.valuation.asOf }
      : null,
    funding: a.funding
      ? {
          totalRaised: a.funding.totalRaised,
          currency: a.funding.currency,
          lastRound: round ? { series: round.series, amount: round.amount, closedOn: round.closedOn } : null,
        }
      : null,
    // An untracked parent has no id: null, with the CRM's raw name.
    parentCompany: a.parentCompany ? { id: a.parentCompany.id || null, name: a.parentCompany.name } : null,
    summary: orNull(a.summary),
    // sourceRefs holds only the connected integrations: empty when the record has no CRM reference.
    // url is null when the CRM sync gave none (never an empty string).
    sourceRefs: a.crmSourceRef ? { crm: { id: a.crmSourceRef.id, url: a.crmSourceRef.url || null } } : {},
  };
}

export function contactListJson(c: Contact) {
  return {
    id: c.id,
    orgId: c.orgId,
    firstName: c.firstName,
    lastName: c.lastName,
    displayName: c.displayName,
    email: c.email,
    phone: orNull(c.phone),
    title: orNull(c.title),
    account: c.account ? { id: c.account.id, name: c.account.name } : null,
    profileIconUri: orNull(c.profileIconUri),
    ...timestampsJson(c),
  };
}

export function contactJson(c: Contact) {
  return {
    ...contactListJson(c),
    linkedInUrl: orNull(c.linkedInUrl),
    summary: orNull(c.summary),
    sourceRefs: c.crmSourceRef ? { crm: { id: c.crmSourceRef.id, url: c.crmSourceRef.url || null } } : {},
  };
}

export function activityJson(a: ActivityItem) {
  const occurredAt = iso(a.occurredAt, "occurred_at");
  switch (a.reference.case) {
    case "meeting": {
      const m = a.reference.value;
      return { type: "meeting", occurredAt, reference: { id: m.id, title: m.title, hostName: m.hostName } };
    }
    case "email": {
      const e = a.reference.value;
      return { type: "email", occurredAt, reference: { subject: e.subject, senderName: e.senderName } };
    }
    default:
      throw new Error(`crm-data returned an activity item of type '${a.type}' without a reference`);
  }
}

function chunkBase(c: TranscriptChunk) {
  return {
    chunkId: c.chunkId,
    speaker: c.speaker,
    hostId: orNull(c.hostId),
    language: c.language,
    startTime: c.startTime,
    endTime: c.endTime,
    text: c.text,
  };
}

export function transcriptJson(t: Transcript) {
  return {
    meetingId: t.meetingId,
    botId: t.botId,
    durationSeconds: t.durationSeconds,
    windowStart: t.windowStart,
    windowEnd: t.windowEnd,
    chunks: t.chunks.map((c) => ({
      ...chunkBase(c),
      words: c.words.map((w) => ({ text: w.text, startTime: w.startTime, endTime: w.endTime })),
      isFinal: c.isFinal,
    })),
    compiledText: t.compiledText,
  };
}

/** A chunk of the chunk list: no words, with its meetingId. */
export function chunkListJson(c: TranscriptChunk) {
  return { ...chunkBase(c), meetingId: c.meetingId, isFinal: c.isFinal };
}

export function chatJson(m: ChatMessage) {
  return {
    messageId: m.messageId,
    meetingId: m.meetingId,
    sender: m.sender,
    hostId: orNull(m.hostId),
    sentAt: iso(m.sentAt, "sent_at"),
    text: m.text,
    recipients: m.recipients,
  };
}

export function botJson(b: BotStatus) {
  return {
    botId: b.botId,
    meetingId: b.meetingId,
    status: b.status,
    startedAt: isoOrNull(b.startedAt),
    endedAt: isoOrNull(b.endedAt),
    joinUrl: b.joinUrl,
    provider: b.provider,
    recordingAvailable: b.recordingAvailable,
    transcriptChunksAvailable: b.transcriptChunksAvailable,
    errorReason: orNull(b.errorReason),
  };
}

/** The `since` filter of a timeline: ISO 8601 with a zone, or a date (its start in UTC). */
export function sinceFilter(raw: string | undefined): Timestamp | undefined {
  if (raw === undefined || raw === "") return undefined;
  const ts = parseInstant(raw, { allowDate: true });
  if (!ts)
    throw problem("invalid-filter", "since must be an ISO 8601 date-time with a zone, or a date.", { field: "since" });
  return ts;
}

/** `type` as given once or repeated. */
export const typesFilter = (raw: string | string[] | undefined): string[] =>
  raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
