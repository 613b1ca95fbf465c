// Keeps the planner's picture of webhooks.attempts current while a backlog is fanned out.
import type { Db } from "@platform/kit/db";
import type { Logger } from "@platform/kit/logger";
import { deliveryStore } from "../store/delivery.store.js";

/** Attempts queued before the first ANALYZE, and at least between two. */
const FIRST_ANALYZE = 1_000;
/** Then again once the queued attempts reach this share of the table's rows at the last one. */
const GROWTH = 0.1;

export interface AttemptStatistics {
  /** Counts attempts the fan-out queued; analyzes the table (in the background) once enough were. */
  queued(attempts: number): void;
  /** Resolves when no ANALYZE is running (tests, shutdown). */
  idle(): Promise<void>;
}

/**
 * Postgres plans the worker's statements from the table's statistics, which only ANALYZE
 * (autovacuum's, when it is on) writes. A table that grew in a burst — a fresh deployment, a
 * backlog fanned out after a restart — is planned as if it were empty until then: up to
 * autovacuum's naptime (a minute by default), or for good where autovacuum is off. So the
 * worker analyzes the attempts itself as autovacuum would (at 10 % growth, and at 1,000 rows
 * first), at most one ANALYZE at a time, skipped when another holds the table's lock.
 * It only refreshes statistics: a failure is logged and changes nothing else.
 */
export function attemptStatistics(db: Db, logger: Logger): AttemptStatistics {
  let since = 0;
  let threshold = FIRST_ANALYZE;
  let running: Promise<void> | undefined;
  return {
    queued(attempts) {
      since += attempts;
      if (since < threshold || running) return;
      since = 0;
      running = deliveryStore(db)
        .analyzeAttempts()
        .then(
          (rows) => {
            threshold = Math.max(FIRST_ANALYZE, Math.ceil(rows * GROWTH));
          },
          (err: unknown) => logger.warn({ err }, "webhooks.attempts could not be analyzed"),
        )
        .finally(() => {
          running = undefined;
        });
    },
    idle: () => running ?? Promise.resolve(),
  };
}
