import { closedObject, orNull, sourceRefs, strictObject, timestamp, timestamps } from "../common.js";
import { INSIGHT_TYPES, isoDate, ref } from "./common.js";

// The JSON shapes of deals and their meetings, and the bodies deal writes take.

const amount = orNull(
  closedObject(
    {
      value: { type: ["number", "null"], description: "Null when only the currency is known" },
      currency: { type: "string", description: "ISO 4217" },
    },
    { description: "Null when the deal has no amount; currency always explicit" },
  ),
);

const listProperties = {
  id: { type: "string", description: "deal_ id" },
  orgId: { type: "string" },
  name: { type: "string" },
  stage: { type: "string", description: "A stage of the deal's schema; Won and Lost are terminal" },
  amount,
  closeDate: { type: ["string", "null"], description: "ISO 8601 date" },
  account: closedObject({ id: { type: "string", description: "acct_ id" }, name: { type: "string" } }),
  owner: closedObject(
    { userId: { type: "string" }, displayName: { type: "string" } },
    { description: "The deal owner (not the org owner)" },
  ),
  ...timestamps,
};

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
      closedObject({ id: { type: "string" } }),
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
    insightSummary: closedObject(summaryProperties),
    sourceRefs: sourceRefs(
      closedObject({ id: { type: "string" }, url: { type: ["string", "null"] } }),
      "Present keys only for connected integrations",
    ),
  },
  additionalProperties: false,
} as const;

export const dealMeetingSchema = closedObject(
  {
    meetingId: { type: "string", description: "mtg_ id" },
    title: { type: "string" },
    startTime: timestamp,
    endTime: timestamp,
    status: { type: "string", enum: ["scheduled", "completed", "canceled"] },
    hasTranscript: { type: "boolean", description: "True only when the transcript GET will succeed" },
  },
  { id: "DealMeeting", description: "A meeting linked to a deal (a lightweight reference, not a full Meeting)" },
);

const amountInput = strictObject({
  value: { type: "number", description: "Needs a currency" },
  currency: { type: "string", description: "ISO 4217, e.g. USD" },
});

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
  sourceRefs: sourceRefs(
    strictObject(
      { id: { type: "string", minLength: 1, maxLength: 255 }, url: { type: "string" } },
      { required: ["id"] },
    ),
  ),
};

export const createDealRequestSchema = strictObject(dealInputProperties, {
  required: ["name", "accountId", "stage"],
});

export const updateDealRequestSchema = strictObject({
  ...dealInputProperties,
  amount: { ...amountInput, type: ["object", "null"], description: "null removes the amount" },
  closeDate: { ...isoDate, type: ["string", "null"], description: "null removes the close date" },
  primaryContactId: { type: ["string", "null"], description: "null removes the primary contact" },
  customFields: {
    type: "object",
    description: "Merged: keys set, a null value removes its key, other keys kept",
    additionalProperties: true,
  },
});

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
