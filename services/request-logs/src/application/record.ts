import type { Clock } from "@platform/kit/clock";
import type { Db } from "@platform/kit/db";
import { recordsOfBatch } from "../domain/logged.js";
import { isStorable, type RequestLogRecord } from "../domain/request-log.js";
import { requestLogStore } from "../store/request-log.store.js";
import { ensurePartitions } from "./partitions.js";

/** The days whose partitions this process has created or seen (see ensurePartitions). */
export type KnownDays = Set<number>;

/**
 * Stores a batch of the gateway's request summaries: the records outside the window are
 * dropped, the partitions of their days made when missing, then one multi-row insert that
 * skips records already stored (a redelivered batch). Resolves to how many were new.
 */
export async function recordRequests(
  deps: { db: Db; clock: Clock; knownDays: KnownDays },
  records: readonly RequestLogRecord[],
): Promise<number> {
  const now = deps.clock.now();
  const storable = records.filter((r) => isStorable(r, now));
  if (storable.length === 0) return 0;
  await ensurePartitions(
    deps.db,
    storable.map((r) => r.createdAt),
    deps.knownDays,
  );
  return requestLogStore(deps.db).insertRequestLogs(storable);
}

/**
 * A batch as the gateway builds it (RequestsLogged's JSON form), stored: what the embedded
 * runtime's gateway calls in place of publishing it on the bus.
 */
export function recordRequestBatch(
  deps: { db: Db; clock: Clock; knownDays: KnownDays },
  batch: unknown,
): Promise<number> {
  return recordRequests(deps, recordsOfBatch(batch));
}
