import type { Clock } from "./clock.js";
import type { Db } from "./db.js";
import { purgeIdempotencyKeys } from "./idempotency.js";

/** Published outbox rows are kept a while for inspection, then deleted. */
export const OUTBOX_RETENTION_DAYS = 7;
/**
 * A consumer's record of a handled event must outlive any redelivery: Kafka keeps a topic
 * 7 days by default, so a group reset to the earliest offset replays at most that far back.
 */
export const PROCESSED_EVENTS_RETENTION_DAYS = 30;

export interface PurgeResult {
  outbox: number;
  processedEvents: number;
  idempotencyKeys: number;
}

/**
 * Deletes what the kit's tables no longer need: published outbox rows, consumers' records of
 * handled events, and idempotency records past their replay window (by `clock`, the time
 * they were written with). Rows still in use are never touched.
 */
export async function purgeExpired(db: Db, clock: Clock): Promise<PurgeResult> {
  const s = db.schema;
  const outbox = await db.query(
    `DELETE FROM ${s}.outbox WHERE published_at < now() - make_interval(days => $1) RETURNING id`,
    [OUTBOX_RETENTION_DAYS],
  );
  const processed = await db.query(
    `DELETE FROM ${s}.processed_events WHERE processed_at < now() - make_interval(days => $1) RETURNING event_id`,
    [PROCESSED_EVENTS_RETENTION_DAYS],
  );
  const idempotencyKeys = await purgeIdempotencyKeys(db, clock);
  return { outbox: outbox.length, processedEvents: processed.length, idempotencyKeys };
}
