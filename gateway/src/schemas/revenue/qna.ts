import { orNull, timestamp } from "../common.js";
import { ref } from "./common.js";

// The JSON shapes of Q&A items and the backlog, and the bodies Q&A writes take.

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
