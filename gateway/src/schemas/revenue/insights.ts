import { timestamp } from "../common.js";
import { INSIGHT_TYPES } from "./common.js";

// The JSON shapes of 8P insight records, and the bodies insight writes take.

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
