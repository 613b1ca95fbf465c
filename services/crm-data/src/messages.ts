import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  type Account,
  AccountSchema,
  type ActivityItem,
  ActivityItemSchema,
  type BotStatus,
  BotStatusSchema,
  type ChatMessage,
  ChatMessageSchema,
  type Contact,
  ContactSchema,
  type TranscriptChunk,
  TranscriptChunkSchema,
} from "@platform/contracts/crm";
import type { AccountView, BotView, ChatRecord, ChunkRecord, ContactView } from "./domain/model.js";
import { displayName, parentCompany } from "./domain/records.js";
import type { ActivityRow } from "./store/activity.store.js";

// Records to proto messages; unset optional fields stay unset (the gateway renders null).

const opt = (v: string | null) => v ?? undefined;

/** The list view, or with `detail` the detail view of an account. */
export function accountMessage(a: AccountView, detail: boolean): Account {
  const list = {
    id: a.id,
    orgId: a.orgId,
    name: a.name,
    rootDomain: opt(a.rootDomain),
    fullyQualifiedDomain: opt(a.fullyQualifiedDomain),
    primaryIndustry: opt(a.primaryIndustry),
    industries: a.industries,
    employeeCount: a.employeeCount ?? undefined,
    primaryLocation: opt(a.primaryLocation),
    profileIconUri: opt(a.profileIconUri),
    createTime: timestampFromDate(a.createdAt),
    updateTime: timestampFromDate(a.updatedAt),
  };
  if (!detail) return create(AccountSchema, list);
  const parent = parentCompany(a, a.parent);
  return create(AccountSchema, {
    ...list,
    valuation: a.valuation ?? undefined,
    funding: a.funding ? { ...a.funding, lastRound: a.funding.lastRound ?? undefined } : undefined,
    parentCompany: parent ? { id: parent.id ?? "", name: parent.name } : undefined,
    summary: opt(a.summary),
    crmSourceRef: { id: a.crmId, url: a.crmUrl },
  });
}

export function contactMessage(c: ContactView, detail: boolean): Contact {
  const list = {
    id: c.id,
    orgId: c.orgId,
    firstName: c.firstName,
    lastName: c.lastName,
    displayName: displayName(c),
    email: c.email,
    phone: opt(c.phone),
    title: opt(c.title),
    account: c.account ?? undefined,
    profileIconUri: opt(c.profileIconUri),
    createTime: timestampFromDate(c.createdAt),
    updateTime: timestampFromDate(c.updatedAt),
  };
  if (!detail) return create(ContactSchema, list);
  return create(ContactSchema, {
    ...list,
    linkedInUrl: opt(c.linkedInUrl),
    summary: opt(c.summary),
    crmSourceRef: { id: c.crmId, url: c.crmUrl },
  });
}

export function activityMessage(a: ActivityRow): ActivityItem {
  return create(ActivityItemSchema, {
    type: a.type,
    occurredAt: timestampFromDate(a.occurredAt),
    reference: a.type === "meeting" ? { case: "meeting", value: a.meeting } : { case: "email", value: a.email },
  });
}

/** A chunk with its words (transcript) or without (chunk list). */
export function chunkMessage(c: ChunkRecord, withWords: boolean): TranscriptChunk {
  return create(TranscriptChunkSchema, {
    chunkId: c.id,
    meetingId: c.meetingId,
    speaker: c.speaker,
    hostId: opt(c.hostId),
    language: c.language,
    startTime: c.startTime,
    endTime: c.endTime,
    text: c.text,
    words: withWords ? c.words : [],
    isFinal: true,
  });
}

export function chatMessage(m: ChatRecord): ChatMessage {
  return create(ChatMessageSchema, {
    messageId: m.id,
    meetingId: m.meetingId,
    sender: m.sender,
    hostId: opt(m.senderHostId),
    sentAt: timestampFromDate(m.sentAt),
    text: m.text,
    recipients: m.recipients,
  });
}

export function botMessage(b: BotView): BotStatus {
  return create(BotStatusSchema, {
    botId: b.botId,
    meetingId: b.meetingId,
    status: b.status,
    startedAt: b.startedAt ? timestampFromDate(b.startedAt) : undefined,
    endedAt: b.endedAt ? timestampFromDate(b.endedAt) : undefined,
    joinUrl: b.joinUrl,
    provider: b.provider,
    recordingAvailable: b.recordingAvailable,
    transcriptChunksAvailable: b.chunkCount,
    errorReason: opt(b.errorReason),
  });
}
