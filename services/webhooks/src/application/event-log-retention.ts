import type { Subscription } from "@platform/kit/bus";
import type { Clock } from "@platform/kit/clock";
import type { Db } from "@platform/kit/db";
import type { Logger } from "@platform/kit/logger";
import { EVENT_LOG_RETENTION_DAYS } from "../domain/event-log.js";
import { eventLogStore } from "../store/event-log.store.js";

const DAY_MS = 86_400_000;
const PURGE_EVERY_MS = 60 * 60 * 1000;
// Small batches keep each DELETE short, so fan-out transactions never wait long behind one.
const BATCH = 1000;

/** Deletes the log's events older than the retention (by the service clock); resolves to how many. */
export async function purgeEventLog(db: Db, clock: Clock): Promise<number> {
  const before = new Date(clock.now().getTime() - EVENT_LOG_RETENTION_DAYS * DAY_MS);
  let total = 0;
  for (;;) {
    const n = await eventLogStore(db).purgeLoggedEvents(before, BATCH);
    total += n;
    if (n < BATCH) return total;
  }
}

/**
 * The log's housekeeping: purges expired events at start and then hourly, beside the kit's
 * hourly purge of its own tables, in every process that fans events out. Several workers
 * purging at once only delete the same rows twice over.
 */
export function startEventLogRetention(deps: { db: Db; clock: Clock; logger: Logger }): Subscription {
  let running: Promise<void> = Promise.resolve();
  const run = () => {
    running = purgeEventLog(deps.db, deps.clock).then(
      (n) => {
        if (n > 0) deps.logger.debug({ purged: n }, "event log: purged expired events");
      },
      (err: unknown) => deps.logger.warn({ err }, "event log: purge failed; retried in an hour"),
    );
  };
  run();
  const timer = setInterval(run, PURGE_EVERY_MS);
  timer.unref();
  return {
    async close() {
      clearInterval(timer);
      await running;
    },
  };
}
