import type { Subscription } from "@platform/kit/bus";
import type { Clock } from "@platform/kit/clock";
import type { Db } from "@platform/kit/db";
import type { Logger } from "@platform/kit/logger";
import { expiredPartitions, partitionDay, partitionsAhead } from "../domain/partitions.js";
import { partitionStore } from "../store/partitions.store.js";
import { ensurePartitions } from "./partitions.js";
import type { KnownDays } from "./record.js";

const EVERY_MS = 60 * 60 * 1000;

/**
 * The log's housekeeping at `clock`'s now: today's and tomorrow's partitions exist, and every
 * partition whose day is wholly older than the 7 days kept is dropped (a whole day at once, no
 * DELETE). Resolves to the partitions dropped.
 */
export async function purgeRequestLogs(db: Db, clock: Clock, knownDays: KnownDays = new Set()): Promise<string[]> {
  const now = clock.now();
  await ensurePartitions(db, partitionsAhead(now), knownDays);
  const store = partitionStore(db);
  const expired = expiredPartitions(await store.listPartitions(), now);
  for (const name of expired) {
    await store.dropPartition(name);
    const day = partitionDay(name);
    if (day) knownDays.delete(day.getTime());
  }
  return expired;
}

/**
 * Runs purgeRequestLogs at start (awaited: the first batch finds today's partition) and then
 * hourly, beside the kit's hourly purge of its own tables. A failure is logged and retried on
 * the next round; several replicas doing it at once only find the work done.
 */
export async function startRequestLogRetention(deps: {
  db: Db;
  clock: Clock;
  logger: Logger;
  knownDays?: KnownDays;
}): Promise<Subscription> {
  let running: Promise<void> = Promise.resolve();
  const run = () => {
    running = purgeRequestLogs(deps.db, deps.clock, deps.knownDays).then(
      (dropped) => {
        if (dropped.length > 0) deps.logger.info({ dropped }, "request logs: dropped expired day partitions");
      },
      (err: unknown) => deps.logger.warn({ err }, "request logs: housekeeping failed; retried in an hour"),
    );
    return running;
  };
  await run();
  const timer = setInterval(run, EVERY_MS);
  timer.unref();
  return {
    async close() {
      clearInterval(timer);
      await running;
    },
  };
}
