// The eight insight (8P) types and their id prefixes: an id's prefix reveals its type.

export const INSIGHT_TYPES = ["profile", "problem", "pain", "power", "position", "phases", "process", "plan"] as const;

export type InsightType = (typeof INSIGHT_TYPES)[number];

export const INSIGHT_PREFIX: Record<InsightType, string> = {
  profile: "prof_",
  problem: "prob_",
  pain: "pain_",
  power: "powr_",
  position: "posn_",
  phases: "phas_",
  process: "proc_",
  plan: "plan_",
};

export const INSIGHT_PREFIXES: readonly string[] = Object.values(INSIGHT_PREFIX);

export function isInsightType(raw: string): raw is InsightType {
  return (INSIGHT_TYPES as readonly string[]).includes(raw);
}

/** The type an 8P id belongs to, by its prefix; undefined for any other prefix. */
export function insightTypeOfId(id: string): InsightType | undefined {
  return INSIGHT_TYPES.find((t) => id.startsWith(INSIGHT_PREFIX[t]));
}
