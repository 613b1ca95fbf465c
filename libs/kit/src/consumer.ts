import type { ConsumedMessage, EventBus, SubscribeOptions, Subscription } from "./bus.js";
import type { Db, Queryable } from "./db.js";
import type { Logger } from "./logger.js";

/**
 * Runs `fn` for an event at most once per consumer: the event id is recorded in the same
 * transaction as the consumer's writes, so a redelivered event (delivery is at least once)
 * is skipped, and a failed one leaves no record and is handled again on redelivery. A
 * concurrent duplicate waits on the primary key until the first commits, then skips.
 * Resolves true when `fn` ran, false for a duplicate.
 */
export async function consumeOnce(
  db: Db,
  consumer: string,
  eventId: string,
  fn: (q: Queryable) => Promise<void>,
): Promise<boolean> {
  let ran = false;
  await consumeBatchOnce(db, consumer, [eventId], async (q) => {
    await fn(q);
    ran = true;
  });
  return ran;
}

/**
 * `consumeOnce` for many events in one transaction (and the one place that claims events): `fn` gets the ids not consumed before (a
 * redelivered batch, or an id twice in it, runs once). Ids are claimed in sorted order, so two
 * transactions claiming overlapping ids wait on each other instead of deadlocking.
 */
export async function consumeBatchOnce(
  db: Db,
  consumer: string,
  eventIds: string[],
  fn: (q: Queryable, fresh: Set<string>) => Promise<void>,
): Promise<void> {
  if (eventIds.length === 0) return;
  await db.tx(async (q) => {
    const claimed = await q.query<{ event_id: string }>(
      `INSERT INTO ${db.schema}.processed_events (consumer, event_id) SELECT $1, unnest($2::text[])
       ON CONFLICT DO NOTHING RETURNING event_id`,
      [consumer, [...new Set(eventIds)].sort()],
    );
    if (claimed.length > 0) await fn(q, new Set(claimed.map((r) => r.event_id)));
  });
}

/**
 * What `read` makes of a consumed message, or undefined when it throws: an unreadable or
 * invalid message is logged (with where it sits) and skipped, since redelivering it would
 * only block its partition. Errors after the read (a database failure) are not caught here:
 * they leave the message uncommitted, so it comes again.
 */
export function readOrSkip<T>(
  logger: Logger,
  message: ConsumedMessage,
  read: (m: ConsumedMessage) => T,
  msg = "unreadable event skipped",
): T | undefined {
  try {
    return read(message);
  } catch (err) {
    logger.error({ err, topic: message.topic, partition: message.partition, offset: message.offset }, msg);
    return undefined;
  }
}

/** What a service's consumers are given: their database, the bus and a logger. */
export interface ConsumerDeps {
  db: Db;
  bus: EventBus;
  logger: Logger;
}

/** One consumer group of a service: the topics it reads and what it does with each message. */
export type ConsumerGroup = Omit<SubscribeOptions, "fromBeginning">;

/**
 * Subscribes a service's consumer groups on `bus`, in order. Each starts from the earliest
 * retained event, so nothing published before a group's first start is missed (consumeOnce
 * makes redelivery harmless). When one fails, those already subscribed are closed. Close the
 * returned subscriptions before the bus.
 */
export async function subscribeGroups(bus: EventBus, groups: ConsumerGroup[]): Promise<Subscription[]> {
  const subscriptions: Subscription[] = [];
  try {
    for (const group of groups) subscriptions.push(await bus.subscribe({ ...group, fromBeginning: true }));
    return subscriptions;
  } catch (err) {
    await Promise.all(subscriptions.map((s) => s.close()));
    throw err;
  }
}
