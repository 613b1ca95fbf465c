import { create } from "@bufbuild/protobuf";
import { type Timestamp, TimestampSchema } from "@bufbuild/protobuf/wkt";

// A time needs a zone: without one the instant would depend on where the server runs.
const ISO_8601 =
  /^(?<year>\d{4})-(?<month>\d{2})-(?<day>\d{2})(?:T(?<hour>\d{2}):(?<minute>\d{2})(?::(?<second>\d{2})(?:\.(?<fraction>\d{1,9}))?)?(?<zone>Z|(?<sign>[+-])(?<zoneHours>\d{2}):(?<zoneMinutes>\d{2})))?$/i;

/**
 * An ISO 8601 date-time with a zone as a Timestamp; with `allowDate`, a date alone too, meaning
 * its start in UTC. Undefined when `raw` is neither, or names a time that does not exist.
 */
export function parseInstant(raw: string, opts: { allowDate: boolean }): Timestamp | undefined {
  const g = ISO_8601.exec(raw)?.groups;
  if (!g || (g.hour === undefined && !opts.allowDate)) return undefined;
  const n = (part: string | undefined) => Number(part ?? 0);
  const fields = [n(g.year), n(g.month) - 1, n(g.day), n(g.hour), n(g.minute), n(g.second)] as const;
  const utc = new Date(Date.UTC(...fields));
  // Date.UTC rolls 2026-02-30 over into March (and years below 100 into the 1900s): only a
  // time that reads back unchanged is a real one.
  const readBack = [
    utc.getUTCFullYear(),
    utc.getUTCMonth(),
    utc.getUTCDate(),
    utc.getUTCHours(),
    utc.getUTCMinutes(),
    utc.getUTCSeconds(),
  ];
  if (readBack.some((v, i) => v !== fields[i]) || n(g.zoneHours) > 23 || n(g.zoneMinutes) > 59) return undefined;
  const offsetMinutes = (g.sign === "-" ? -1 : 1) * (n(g.zoneHours) * 60 + n(g.zoneMinutes));
  return create(TimestampSchema, {
    seconds: BigInt(utc.getTime() / 1000 - offsetMinutes * 60),
    nanos: Number((g.fraction ?? "").padEnd(9, "0")),
  });
}
