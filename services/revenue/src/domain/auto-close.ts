import type { JsonValue } from "./field-values.js";

/**
 * The answer text a discovery item closed by an insight gets: the insight's value, a string
 * as it is and anything else as JSON. An item that already holds a (draft) answer keeps it.
 */
export function answerFromInsight(current: string | null, value: JsonValue): string {
  if (current !== null) return current;
  return typeof value === "string" ? value : JSON.stringify(value);
}
