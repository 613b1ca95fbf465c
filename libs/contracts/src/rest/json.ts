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
