import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";

// Helpers of the REST JSON mappings (the gateway's and the shared Meeting's). A value the
// contract always sets but the response lacks is a producer bug: a plain Error, which the
// gateway logs and answers with an opaque 500.

/** A timestamp the contract always sets, as ISO 8601 UTC. */
export function iso(ts: Timestamp | undefined, what: string): string {
  if (!ts) throw new Error(`response has no ${what}`);
  return timestampDate(ts).toISOString();
}

/** An optional timestamp: ISO 8601 UTC, or an explicit null. */
export const isoOrNull = (ts: Timestamp | undefined): string | null => (ts ? timestampDate(ts).toISOString() : null);

/** A message field the contract always sets. */
export function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`response has no ${what}`);
  return value;
}

/** A resource's creation and last-change times, which the contract always sets, as the REST JSON names them. */
export function timestampsJson(m: { createTime?: Timestamp | undefined; updateTime?: Timestamp | undefined }) {
  return { createdAt: iso(m.createTime, "create_time"), updatedAt: iso(m.updateTime, "update_time") };
}

/**
 * The named optional fields of a message, each an explicit null when unset: the REST JSON
 * writes every field its schema lists, in the order given here.
 */
export function nullsWhenUnset<T extends object, K extends keyof T>(
  m: T,
  ...keys: K[]
): { [P in K]-?: Exclude<T[P], undefined> | null } {
  return Object.fromEntries(keys.map((k) => [k, m[k] ?? null])) as { [P in K]-?: Exclude<T[P], undefined> | null };
}
