// What the deal, Q&A and 8P schemas of the revenue context share.

export const isoDate = {
  type: "string",
  pattern: "^\\d{4}-\\d{2}-\\d{2}$",
  description: "ISO 8601 date (YYYY-MM-DD)",
} as const;
export const ref = (_id: string, description: string) =>
  ({
    type: "object",
    description,
    required: ["id", "displayName"],
    properties: { id: { type: "string" }, displayName: { type: "string" } },
    additionalProperties: false,
  }) as const;

export { INSIGHT_TYPES } from "@platform/contracts/revenue";
