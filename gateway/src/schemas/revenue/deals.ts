import { closedObject, orNull, sourceRefs, timestamp } from "../common.js";
import { INSIGHT_TYPES, isoDate, ref } from "./common.js";

// The JSON shapes of deals and their meetings, and the bodies deal writes take.

const amount = {
  type: ["object", "null"],
  description: "Null when the deal has no amount; currency always explicit",
  required: ["value", "currency"],
  properties: {
    value: { type: ["number", "null"], description: "Null when only the currency is known" },
    currency: { type: "string", description: "ISO 4217" },
  },
  additionalProperties: false,
} as const;

const listProperties = {
  id: { type: "string", description: "deal_ id" },
  orgId: { type: "string" },
  name: { type: "string" },
  stage: { type: "string", description: "A stage of the deal's schema; Won and Lost are terminal" },
  amount,
  closeDate: { type: ["string", "null"], description: "ISO 8601 date" },
  account: {
    type: "object",
    required: ["id", "name"],
    properties: { id: { type: "string", description: "acct_ id" }, name: { type: "string" } },
    additionalProperties: false,
  },
  owner: {
    type: "object",
    description: "The deal owner (not the org owner)",
    required: ["userId", "displayName"],
    properties: { userId: { type: "string" }, displayName: { type: "string" } },
    additionalProperties: false,
  },
  createdAt: timestamp,
  updatedAt: timestamp,
} as const;

const listRequired = [
  "id",
  "orgId",
  "name",
  "stage",
  "amount",
  "closeDate",
  "account",
  "owner",
  "sourceRefs",
  "createdAt",
  "updatedAt",
];

const summaryProperties = Object.fromEntries(
  INSIGHT_TYPES.map((t) => [
    `${t}Id`,
    { type: ["string", "null"], description: `The ${t} record; null until it exists` },
  ]),
);

export const dealListItemSchema = {
  $id: "DealListItem",
  type: "object",
  description: "A deal in a list",
  required: listRequired,
  properties: {
    ...listProperties,
    sourceRefs: sourceRefs(
      { type: "object", required: ["id"], properties: { id: { type: "string" } }, additionalProperties: false },
      "Present keys only for connected integrations; list view: id only",
    ),
  },
  additionalProperties: false,
} as const;

export const dealSchema = {
  $id: "Deal",
  type: "object",
  description: "A deal (detail view)",
  required: [...listRequired, "primaryContact", "schemaId", "schemaVersion", "customFields", "insightSummary"],
  properties: {
    ...listProperties,
    primaryContact: orNull(ref("primaryContact", "Primary contact (cont_); null when none")),
    schemaId: { type: "string", description: "schm_ id" },
    schemaVersion: { type: "integer", description: "Version of the schema the deal was last written under" },
    customFields: { type: "object", description: "Keys and types per the schema", additionalProperties: true },
    insightSummary: {
      type: "object",
      required: INSIGHT_TYPES.map((t) => `${t}Id`),
      properties: summaryProperties,
      additionalProperties: false,
    },
    sourceRefs: sourceRefs(
      closedObject({ id: { type: "string" }, url: { type: ["string", "null"] } }),
      "Present keys only for connected integrations",
    ),
  },
  additionalProperties: false,
} as const;

export const dealMeetingSchema = {
  $id: "DealMeeting",
  type: "object",
  description: "A meeting linked to a deal (a lightweight reference, not a full Meeting)",
  required: ["meetingId", "title", "startTime", "endTime", "status", "hasTranscript"],
  properties: {
    meetingId: { type: "string", description: "mtg_ id" },
    title: { type: "string" },
    startTime: timestamp,
    endTime: timestamp,
    status: { type: "string", enum: ["scheduled", "completed", "canceled"] },
    hasTranscript: { type: "boolean", description: "True only when the transcript GET will succeed" },
  },
  additionalProperties: false,
} as const;

const amountInput = {
  type: "object",
  properties: {
    value: { type: "number", description: "Needs a currency" },
    currency: { type: "string", description: "ISO 4217, e.g. USD" },
  },
  additionalProperties: false,
} as const;

const dealInputProperties = {
  name: { type: "string", minLength: 1, maxLength: 500 },
  accountId: { type: "string", description: "acct_ id of the org" },
  stage: { type: "string", description: "A stage of the deal's schema" },
  amount: amountInput,
  closeDate: isoDate,
  ownerId: { type: "string", description: "usr_ id; default the organization's administrator" },
  primaryContactId: { type: "string", description: "cont_ id of the org" },
  schemaId: { type: "string", description: "schm_ id; default the org's default schema" },
  customFields: { type: "object", description: "Keys and types per the schema", additionalProperties: true },
  sourceRefs: sourceRefs({
    type: "object",
    required: ["id"],
    properties: { id: { type: "string", minLength: 1, maxLength: 255 }, url: { type: "string" } },
    additionalProperties: false,
  }),
} as const;

export const createDealRequestSchema = {
  type: "object",
  required: ["name", "accountId", "stage"],
  properties: dealInputProperties,
  additionalProperties: false,
} as const;

export const updateDealRequestSchema = {
  type: "object",
  properties: {
    ...dealInputProperties,
    amount: { ...amountInput, type: ["object", "null"], description: "null removes the amount" },
    closeDate: { ...isoDate, type: ["string", "null"], description: "null removes the close date" },
    primaryContactId: { type: ["string", "null"], description: "null removes the primary contact" },
    customFields: {
      type: "object",
      description: "Merged: keys set, a null value removes its key, other keys kept",
      additionalProperties: true,
    },
  },
  additionalProperties: false,
} as const;

export const DEAL_NOT_WRITABLE: Record<string, string> = {
  id: "A deal's id is assigned by the service.",
  orgId: "A deal belongs to the token's organization.",
  account: "Set accountId instead.",
  owner: "Set ownerId instead.",
  primaryContact: "Set primaryContactId instead.",
  schemaVersion: "The schema version follows the deal's schema.",
  insightSummary: "The 8P records are created under /deals/{dealId}/insights.",
  createdAt: "Set by the service.",
  updatedAt: "Set by the service.",
};
