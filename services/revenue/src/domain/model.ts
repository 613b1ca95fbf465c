import type { CustomFields } from "./custom-fields.js";
import type { Outcome } from "./deal-schema.js";
import type { JsonValue } from "./field-values.js";
import type { InsightType } from "./insight-types.js";
import type { AnswerSourceType, QnaState } from "./qna-state.js";

export type { DealSchemaRecord, Stage } from "./deal-schema.js";

export interface DealRecord {
  id: string;
  orgId: string;
  name: string;
  stage: string;
  outcome: Outcome;
  amount: { value: number | null; currency: string } | null;
  /** YYYY-MM-DD. */
  closeDate: string | null;
  account: { id: string; name: string };
  owner: { userId: string; displayName: string };
  primaryContact: { id: string; displayName: string } | null;
  schemaId: string;
  schemaVersion: number;
  customFields: CustomFields;
  crm: { id: string; url: string | null } | null;
  createdAt: Date;
  updatedAt: Date;
}

export type Importance = "low" | "medium" | "high";
export const IMPORTANCES: readonly Importance[] = ["low", "medium", "high"];

export interface QnaOccurrence {
  meetingId: string;
  occurredAt: string;
  source: "ai-agent" | "user" | "webhook";
}

export interface QnaRecord {
  id: string;
  orgId: string;
  dealId: string;
  direction: "discovery" | "rfi";
  state: QnaState;
  questionText: string;
  answerText: string | null;
  answer: {
    type: AnswerSourceType | "insight";
    meetingId?: string;
    chunkId?: string;
    documentId?: string;
    confidence: number;
  } | null;
  importance: Importance;
  linkedInsight: { schemaType: InsightType; fieldKey: string } | null;
  contact: { id: string; displayName: string } | null;
  occurrences: QnaOccurrence[];
  createdAt: Date;
  updatedAt: Date;
}

export type CapturedBy =
  | { type: "user"; userId: string; displayName: string }
  | { type: "ai-agent"; agentName: string };

export interface InsightItemRecord {
  itemId: string;
  value: JsonValue;
  importance: Importance;
  rationale: string | null;
  capturedFrom: { meetingId: string; chunkId: string | null; capturedAt: string } | null;
  capturedBy: CapturedBy;
}

export interface InsightRecordRow {
  id: string;
  orgId: string;
  dealId: string;
  schemaType: InsightType;
  schemaId: string;
  schemaVersion: number;
  fields: Record<string, InsightItemRecord[]>;
  createdAt: Date;
  updatedAt: Date;
}

/** A meeting as scheduling's events describe it. */
export interface MeetingRecord {
  id: string;
  orgId: string;
  title: string;
  start: Date;
  end: Date;
  canceled: boolean;
  /** Booked from a preview slot token: referenceable, but never linked to deals. */
  preview: boolean;
  attendeeEmails: string[];
}

/** An account of crm-data as revenue knows it. */
export interface AccountRef {
  id: string;
  name: string;
}

/** A contact of crm-data as revenue knows it (email lower-cased). */
export interface ContactRef {
  id: string;
  accountId: string;
  displayName: string;
  email: string;
}

/** A user of identity as revenue knows them. */
export interface UserRef {
  userId: string;
  displayName: string;
}
