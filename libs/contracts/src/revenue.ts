export * from "./gen/platform/revenue/v1/deal_pb.js";
export * from "./gen/platform/revenue/v1/insight_pb.js";
export * from "./gen/platform/revenue/v1/qna_pb.js";
export * from "./gen/platform/revenue/v1/schema_pb.js";

// Enumerations of the REST API that revenue stores and the gateway documents: one list each.

/** The eight 8P insight types, in the spec's order. */
export const INSIGHT_TYPES = ["profile", "problem", "pain", "power", "position", "phases", "process", "plan"] as const;

/** The id prefix of each insight type's records. */
export const INSIGHT_PREFIX: Record<(typeof INSIGHT_TYPES)[number], string> = {
  profile: "prof_",
  problem: "prob_",
  pain: "pain_",
  power: "powr_",
  position: "posn_",
  phases: "phas_",
  process: "proc_",
  plan: "plan_",
};
