import { closedObject, orNull, strictObject, timestamp, timestamps } from "../common.js";
import { ref } from "./common.js";

// The JSON shapes of Q&A items and the backlog, and the bodies Q&A writes take.

/** The 8P field a discovery question is linked to, as an item shows it and as create takes it. */
const linkedInsightFields = { schemaType: { type: "string" }, fieldKey: { type: "string" } };

export const qnaSchema = closedObject(
  {
    id: { type: "string", description: "qna_ id" },
    direction: { type: "string", enum: ["discovery", "rfi"] },
    state: { type: "string", enum: ["open", "answered", "dismissed"] },
    questionText: { type: "string" },
    answerText: { type: ["string", "null"], description: "While open, a kept draft answer (confidence below 0.6)" },
    importance: { type: "string", enum: ["low", "medium", "high"] },
    linkedInsight: orNull(closedObject(linkedInsightFields, { description: "Discovery only" })),
    contact: orNull(ref("contact", "RFI only")),
    occurrences: {
      type: "array",
      items: closedObject({
        meetingId: { type: "string" },
        occurredAt: timestamp,
        source: { type: "string", enum: ["ai-agent", "user", "webhook"] },
      }),
    },
    ...timestamps,
  },
  { id: "Qna", description: "A Q&A item" },
);

const bucket = closedObject({
  count: { type: "integer", description: "Full count" },
  items: { type: "array", maxItems: 25, items: { $ref: "Qna#" } },
});
const buckets = closedObject({ open: bucket, answered: bucket, dismissed: bucket });

export const qnaBacklogSchema = closedObject(
  { dealId: { type: "string" }, discovery: buckets, rfi: buckets },
  { id: "QnaBacklog", description: "A deal's Q&A backlog: six buckets, always present" },
);

export const createQnaRequestSchema = strictObject(
  {
    direction: { type: "string", description: "discovery or rfi" },
    questionText: { type: "string", minLength: 1, maxLength: 5000 },
    importance: { type: "string", enum: ["low", "medium", "high"], description: "Default medium" },
    linkedInsight: closedObject(linkedInsightFields, {
      description: "Required for discovery: an 8P field of the deal's schema",
    }),
    contactId: { type: "string", description: "Required for rfi: cont_ id of the org" },
    occurrences: {
      type: "array",
      description: "At least one",
      maxItems: 100,
      items: closedObject({ meetingId: { type: "string" }, occurredAt: timestamp }),
    },
  },
  { required: ["direction", "questionText", "occurrences"] },
);

export const answerQnaRequestSchema = strictObject(
  {
    answerText: { type: "string", minLength: 1, maxLength: 10000 },
    source: strictObject(
      {
        type: { type: "string", description: "meeting, manual, grounding-doc or external" },
        meetingId: { type: "string", description: "Required for meeting" },
        chunkId: { type: "string", description: "Meeting only" },
        documentId: { type: "string", description: "Required for grounding-doc" },
      },
      { required: ["type"] },
    ),
    confidence: {
      type: "number",
      minimum: 0,
      maximum: 1,
      description: "Default 1.0 manual, 0.5 grounding-doc and external, the service's score for meeting",
    },
  },
  { required: ["answerText", "source"] },
);

// The two optional bodies name no type: fastify validates a missing body as undefined, which a
// type would refuse; an object is still checked property by property, anything else by the route.

export const transitionQnaRequestSchema = {
  description: "Optional",
  if: { type: "object" },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, never awaited
  then: { type: "object", properties: { reason: { type: "string", maxLength: 1000 } }, additionalProperties: false },
} as const;
