import type { FormAnswer, Routing, RoutingCondition } from "./model.js";

function conditionMatches(condition: RoutingCondition, values: Record<string, FormAnswer>): boolean {
  if (!Object.hasOwn(values, condition.fieldKey)) return false;
  const answer = values[condition.fieldKey];
  if (answer === undefined || answer === null) return false;
  const answers = Array.isArray(answer) ? answer : [answer];
  return answers.some((a) => condition.anyOf.includes(String(a)));
}

/**
 * The priority-ordered host groups for a set of form values: those of the first rule whose
 * conditions all match (a rule without conditions always matches), else the fallback.
 * Each host is kept only in its highest-priority group and once; empty groups are dropped,
 * so index 0 is always the most preferred group that has someone in it.
 */
export function routeHosts(routing: Routing, values: Record<string, FormAnswer>): string[][] {
  const rule = routing.rules.find((r) => r.when.every((c) => conditionMatches(c, values)));
  const groups = rule ? rule.hostGroups : routing.fallback;
  const seen = new Set<string>();
  const result: string[][] = [];
  for (const group of groups) {
    const kept: string[] = [];
    for (const userId of group) {
      if (seen.has(userId)) continue;
      seen.add(userId);
      kept.push(userId);
    }
    if (kept.length > 0) result.push(kept);
  }
  return result;
}
