import { INSIGHT_PREFIX, INSIGHT_TYPES } from "@platform/contracts/revenue";

// The eight insight (8P) types and their id prefixes (the contracts' lists, which the gateway
// documents): an id's prefix reveals its type.

export { INSIGHT_PREFIX, INSIGHT_TYPES };

export type InsightType = (typeof INSIGHT_TYPES)[number];

export const INSIGHT_PREFIXES: readonly string[] = Object.values(INSIGHT_PREFIX);

export function isInsightType(raw: string): raw is InsightType {
  return (INSIGHT_TYPES as readonly string[]).includes(raw);
}

/** The type an 8P id belongs to, by its prefix; undefined for any other prefix. */
export function insightTypeOfId(id: string): InsightType | undefined {
  return INSIGHT_TYPES.find((t) => id.startsWith(INSIGHT_PREFIX[t]));
}
