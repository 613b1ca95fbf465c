import type { JsonSchema } from "../route.js";
import { orNull, timestamp } from "./common.js";

// The JSON shapes of deals, Q&A items and 8P records, and the bodies their writes take.

const isoDate = {
  type: "string",
  pattern: "^\\d{4}-\\d{2}-\\d{2}$",
  description: "ISO 8601 date (YYYY-MM-DD)",
} as const;
const ref = (_id: string, description: string) =>
  ({
    type: "object",
    description,
    required: ["id", "displayName"],
    properties: { id: { type: "string" }, displayName: { type: "string" } },
    additionalProperties: false,
  }) as const;

export const INSIGHT_TYPES = ["profile", "problem", "pain", "power", "position", "phases", "process", "plan"] as const;

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
    sourceRefs: {
      type: "object",
      description: "Present keys only for connected integrations; list view: id only",
      properties: {
        crm: { type: "object", required: ["id"], properties: { id: { type: "string" } }, additionalProperties: false },
      },
      additionalProperties: false,
    },
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
    sourceRefs: {
      type: "object",
      description: "Present keys only for connected integrations",
      properties: {
        crm: {
          type: "object",
          required: ["id", "url"],
          properties: { id: { type: "string" }, url: { type: ["string", "null"] } },
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
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

export const qnaSchema = {
  $id: "Qna",
  type: "object",
  description: "A Q&A item",
  required: [
    "id",
    "direction",
    "state",
    "questionText",
    "answerText",
    "importance",
    "linkedInsight",
    "contact",
    "occurrences",
    "createdAt",
    "updatedAt",
  ],
  properties: {
    id: { type: "string", description: "qna_ id" },
    direction: { type: "string", enum: ["discovery", "rfi"] },
    state: { type: "string", enum: ["open", "answered", "dismissed"] },
    questionText: { type: "string" },
    answerText: { type: ["string", "null"], description: "While open, a kept draft answer (confidence below 0.6)" },
    importance: { type: "string", enum: ["low", "medium", "high"] },
    linkedInsight: {
      type: ["object", "null"],
      description: "Discovery only",
      required: ["schemaType", "fieldKey"],
      properties: { schemaType: { type: "string" }, fieldKey: { type: "string" } },
      additionalProperties: false,
    },
    contact: orNull(ref("contact", "RFI only")),
    occurrences: {
      type: "array",
      items: {
        type: "object",
        required: ["meetingId", "occurredAt", "source"],
        properties: {
          meetingId: { type: "string" },
          occurredAt: timestamp,
          source: { type: "string", enum: ["ai-agent", "user", "webhook"] },
        },
        additionalProperties: false,
      },
    },
    createdAt: timestamp,
    updatedAt: timestamp,
  },
  additionalProperties: false,
} as const;

const bucket = {
  type: "object",
  required: ["count", "items"],
  properties: {
    count: { type: "integer", description: "Full count" },
    items: { type: "array", maxItems: 25, items: { $ref: "Qna#" } },
  },
  additionalProperties: false,
} as const;
const buckets = {
  type: "object",
  required: ["open", "answered", "dismissed"],
  properties: { open: bucket, answered: bucket, dismissed: bucket },
  additionalProperties: false,
} as const;

export const qnaBacklogSchema = {
  $id: "QnaBacklog",
  type: "object",
  description: "A deal's Q&A backlog: six buckets, always present",
  required: ["dealId", "discovery", "rfi"],
  properties: { dealId: { type: "string" }, discovery: buckets, rfi: buckets },
  additionalProperties: false,
} as const;

export const insightItemSchema = {
  $id: "InsightItem",
  type: "object",
  required: ["itemId", "value", "importance", "rationale", "capturedFrom", "capturedBy"],
  properties: {
    itemId: { type: "string", description: "insi_ id" },
    value: { description: "Typed per the schema field: string, number, boolean, array or object" },
    importance: { type: "string", enum: ["low", "medium", "high"] },
    rationale: { type: ["string", "null"] },
    capturedFrom: {
      type: ["object", "null"],
      required: ["meetingId", "chunkId", "capturedAt"],
      properties: { meetingId: { type: "string" }, chunkId: { type: ["string", "null"] }, capturedAt: timestamp },
      additionalProperties: false,
    },
    capturedBy: {
      type: "object",
      description: "{type: user, userId, displayName} or {type: ai-agent, agentName}",
      required: ["type"],
      properties: {
        type: { type: "string", enum: ["user", "ai-agent"] },
        userId: { type: "string" },
        displayName: { type: "string" },
        agentName: { type: "string" },
      },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;

export const insightSchema = {
  $id: "Insight",
  type: "object",
  description: "An 8P record; items only ever appended",
  required: ["id", "schemaType", "dealId", "orgId", "schemaId", "schemaVersion", "fields", "createdAt", "updatedAt"],
  properties: {
    id: { type: "string", description: "prof_, prob_, pain_, powr_, posn_, phas_, proc_ or plan_ id" },
    schemaType: { type: "string", enum: INSIGHT_TYPES },
    dealId: { type: "string" },
    orgId: { type: "string" },
    schemaId: { type: "string" },
    schemaVersion: { type: "integer" },
    fields: {
      type: "object",
      description: "Field key → items oldest to newest; every field of the type's schema is present",
      additionalProperties: { type: "array", items: { $ref: "InsightItem#" } },
    },
    createdAt: timestamp,
    updatedAt: timestamp,
  },
  additionalProperties: false,
} as const;

export const dealInsightsSchema = {
  $id: "DealInsights",
  type: "object",
  description: "All eight records of a deal; null where absent",
  required: ["dealId", ...INSIGHT_TYPES],
  properties: {
    dealId: { type: "string" },
    ...Object.fromEntries(INSIGHT_TYPES.map((t) => [t, { anyOf: [{ $ref: "Insight#" }, { type: "null" }] }])),
  },
  additionalProperties: false,
} as const;

// Request bodies.

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
  sourceRefs: {
    type: "object",
    properties: {
      crm: {
        type: "object",
        required: ["id"],
        properties: { id: { type: "string", minLength: 1, maxLength: 255 }, url: { type: "string" } },
        additionalProperties: false,
      },
    },
    additionalProperties: false,
  },
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

export const createQnaRequestSchema = {
  type: "object",
  required: ["direction", "questionText", "occurrences"],
  properties: {
    direction: { type: "string", description: "discovery or rfi" },
    questionText: { type: "string", minLength: 1, maxLength: 5000 },
    importance: { type: "string", enum: ["low", "medium", "high"], description: "Default medium" },
    linkedInsight: {
      type: "object",
      description: "Required for discovery: an 8P field of the deal's schema",
      required: ["schemaType", "fieldKey"],
      properties: { schemaType: { type: "string" }, fieldKey: { type: "string" } },
      additionalProperties: false,
    },
    contactId: { type: "string", description: "Required for rfi: cont_ id of the org" },
    occurrences: {
      type: "array",
      description: "At least one",
      maxItems: 100,
      items: {
        type: "object",
        required: ["meetingId", "occurredAt"],
        properties: { meetingId: { type: "string" }, occurredAt: timestamp },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

export const answerQnaRequestSchema = {
  type: "object",
  required: ["answerText", "source"],
  properties: {
    answerText: { type: "string", minLength: 1, maxLength: 10000 },
    source: {
      type: "object",
      required: ["type"],
      properties: {
        type: { type: "string", description: "meeting, manual, grounding-doc or external" },
        meetingId: { type: "string", description: "Required for meeting" },
        chunkId: { type: "string", description: "Meeting only" },
        documentId: { type: "string", description: "Required for grounding-doc" },
      },
      additionalProperties: false,
    },
    confidence: {
      type: "number",
      minimum: 0,
      maximum: 1,
      description: "Default 1.0 manual, 0.5 grounding-doc and external, the service's score for meeting",
    },
  },
  additionalProperties: false,
} as const;

// The two optional bodies name no type: fastify validates a missing body as undefined, which a
// type would refuse; an object is still checked property by property, anything else by the route.

export const transitionQnaRequestSchema = {
  description: "Optional",
  if: { type: "object" },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, never awaited
  then: { type: "object", properties: { reason: { type: "string", maxLength: 1000 } }, additionalProperties: false },
} as const;

export const createInsightRequestSchema = {
  description: "Optional: empty, or {schemaId}",
  if: { type: "object" },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, never awaited
  then: {
    type: "object",
    properties: { schemaId: { type: "string", description: "schm_ id; default the deal's schema" } },
    additionalProperties: false,
  },
} as const;

export const appendInsightItemRequestSchema = {
  type: "object",
  required: ["value"],
  properties: {
    value: { description: "Typed per the schema field" },
    importance: { type: "string", enum: ["low", "medium", "high"], description: "Default medium" },
    rationale: { type: "string", maxLength: 5000 },
    capturedFrom: {
      type: "object",
      required: ["meetingId"],
      properties: { meetingId: { type: "string" }, chunkId: { type: "string" } },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;

export const revenueJsonSchemas: JsonSchema[] = [
  dealListItemSchema,
  dealSchema,
  dealMeetingSchema,
  qnaSchema,
  qnaBacklogSchema,
  insightItemSchema,
  insightSchema,
  dealInsightsSchema,
];
