import { BOT_STATUSES, VIDEO_PROVIDERS } from "@platform/contracts/crm";
import { closedObject, type JsonSchema, nullable, orNull, sourceRefs, timestamp, timestamps } from "./common.js";

// Response schemas of crm-data's endpoints ($id'd, referenced by the routes). The serializer
// writes only what a schema names, so every field of the spec is listed.

const date = { type: "string", format: "date", description: "YYYY-MM-DD" } as const;

const object = (properties: Record<string, unknown>, description?: string, nullableObject = false): JsonSchema => {
  const schema = closedObject(properties, { description });
  return nullableObject ? orNull(schema) : schema;
};

const crmSourceRefs = sourceRefs(
  object({
    id: { type: "string", description: "Raw CRM id" },
    url: { type: ["string", "null"], description: "The record in the CRM; null when the sync gave none" },
  }),
  "External references by integration; crm when the CRM integration is connected",
);

/**
 * A CRM record's two views: the list view (`<id>Summary`) and the detail view (`<id>`), which
 * is the list view plus the fields only it shows.
 */
const listAndDetail = (
  id: string,
  noun: string,
  listFields: Record<string, unknown>,
  detailOnly: Record<string, unknown>,
) => ({
  summary: closedObject(listFields, { id: `${id}Summary`, description: `${noun} (list view)` }),
  detail: closedObject({ ...listFields, ...detailOnly }, { id, description: `${noun} (detail view)` }),
});

const accountList = {
  id: { type: "string", description: "acct_ id" },
  orgId: { type: "string", description: "org_ id" },
  name: { type: "string" },
  rootDomain: nullable("string", "Registrable domain, lower case"),
  fullyQualifiedDomain: nullable("string"),
  primaryIndustry: nullable("string"),
  industries: { type: "array", items: { type: "string" } },
  employeeCount: nullable("integer", "1 to 1,000,000"),
  primaryLocation: nullable("string"),
  profileIconUri: nullable("string"),
  ...timestamps,
};

export const { summary: accountSummarySchema, detail: accountSchema } = listAndDetail(
  "Account",
  "An account",
  accountList,
  {
    valuation: object(
      { amount: { type: "number" }, currency: { type: "string" }, asOf: date },
      "Latest valuation",
      true,
    ),
    funding: object(
      {
        totalRaised: { type: "number" },
        currency: { type: "string" },
        lastRound: object(
          { series: { type: "string" }, amount: { type: "number" }, closedOn: date },
          "Latest round",
          true,
        ),
      },
      "Funding summary",
      true,
    ),
    parentCompany: object(
      { id: nullable("string", "acct_ id; null when the parent is not tracked"), name: { type: "string" } },
      "Parent company",
      true,
    ),
    summary: nullable("string", "Generated; may be stale"),
    sourceRefs: crmSourceRefs,
  },
);

const contactList = {
  id: { type: "string", description: "cont_ id" },
  orgId: { type: "string", description: "org_ id" },
  firstName: { type: "string" },
  lastName: { type: "string" },
  displayName: { type: "string" },
  email: { type: "string", description: "Primary email" },
  phone: nullable("string"),
  title: nullable("string"),
  account: object({ id: { type: "string" }, name: { type: "string" } }, "The contact's account", true),
  profileIconUri: nullable("string"),
  ...timestamps,
};

export const { summary: contactSummarySchema, detail: contactSchema } = listAndDetail(
  "Contact",
  "A contact",
  contactList,
  {
    linkedInUrl: nullable("string"),
    summary: nullable("string", "Generated; may be stale"),
    sourceRefs: crmSourceRefs,
  },
);

export const activityItemSchema = {
  $id: "ActivityItem",
  type: "object",
  description: "A timeline entry; reference by type",
  required: ["type", "occurredAt", "reference"],
  properties: {
    type: { type: "string", enum: ["meeting", "email"] },
    occurredAt: { ...timestamp, description: "Meeting start, or when the email was sent" },
    reference: {
      type: "object",
      description: "meeting: {id, title, hostName}; email: {subject, senderName}",
      properties: {
        id: { type: "string", description: "mtg_ id" },
        title: { type: "string" },
        hostName: { type: "string" },
        subject: { type: "string" },
        senderName: { type: "string" },
      },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
};

const word = object({ text: { type: "string" }, startTime: { type: "number" }, endTime: { type: "number" } });

const chunkBase = {
  chunkId: { type: "string", description: "chnk_ id" },
  speaker: { type: "string", description: "Display name" },
  hostId: nullable("string", "usr_ id; null when unresolved (which does not mean absent from the platform)"),
  language: { type: "string", description: "ISO code" },
  startTime: { type: "number", description: "Seconds from meeting start" },
  endTime: { type: "number", description: "Seconds from meeting start" },
  text: { type: "string" },
};

export const transcriptSchema = {
  $id: "Transcript",
  ...object(
    {
      meetingId: { type: "string" },
      botId: { type: "string", description: "trs_ id" },
      durationSeconds: { type: "number", description: "Full length regardless of the window" },
      windowStart: { type: "number" },
      windowEnd: { type: "number" },
      chunks: {
        type: "array",
        items: object({ ...chunkBase, words: { type: "array", items: word }, isFinal: { type: "boolean" } }),
      },
      compiledText: { type: "string", description: "Chunks as `speaker: text` lines" },
    },
    "A meeting's transcript, or a window of it",
  ),
};

export const transcriptChunkSummarySchema = {
  $id: "TranscriptChunkSummary",
  ...object({ ...chunkBase, meetingId: { type: "string" }, isFinal: { type: "boolean" } }, "A chunk without words"),
};

export const chatMessageSchema = {
  $id: "ChatMessage",
  ...object(
    {
      messageId: { type: "string", description: "chat_ id" },
      meetingId: { type: "string" },
      sender: { type: "string" },
      hostId: nullable("string", "usr_ id or null"),
      sentAt: timestamp,
      text: { type: "string" },
      recipients: { type: "string", enum: ["everyone", "private"] },
    },
    "A chat message (private ones only when the bot's owner was a party)",
  ),
};

export const botStatusSchema = {
  $id: "BotStatus",
  ...object(
    {
      botId: { type: "string", description: "trs_ id" },
      meetingId: { type: "string" },
      status: {
        type: "string",
        enum: [...BOT_STATUSES],
      },
      startedAt: nullable("string"),
      endedAt: nullable("string", "null while running"),
      joinUrl: { type: "string" },
      provider: { type: "string", enum: [...VIDEO_PROVIDERS] },
      recordingAvailable: { type: "boolean" },
      transcriptChunksAvailable: { type: "integer", description: "Running count" },
      errorReason: nullable("string", "Set when status is failed"),
    },
    "The recording bot's status",
  ),
};

export const crmResponseSchemas: JsonSchema[] = [
  accountSummarySchema,
  accountSchema,
  contactSummarySchema,
  contactSchema,
  activityItemSchema,
  transcriptSchema,
  transcriptChunkSummarySchema,
  chatMessageSchema,
  botStatusSchema,
];
