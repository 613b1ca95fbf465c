import type { ConsumedMessage, EventBus, Subscription } from "@platform/kit/bus";
import type { Clock } from "@platform/kit/clock";
import { consumeBatchOnce, readOrSkip } from "@platform/kit/consumer";
import type { Db } from "@platform/kit/db";
import { TOPICS } from "@platform/kit/events";
import { newId } from "@platform/kit/ids";
import type { Logger } from "@platform/kit/logger";
import { decodeEvent } from "@platform/kit/outbox";
import { pendingAttempt } from "../domain/attempt.js";
import { EVENT_CATALOG } from "../domain/catalog.js";
import { publicEventId } from "../domain/event-log.js";
import type { SubscriptionRecord } from "../domain/model.js";
import { audienceOf, renderPayload, type StoredEvent } from "../domain/payload.js";
import { txStore } from "../store/index.js";

/** The default consumer group of the fan-out. */
export const DELIVERY_GROUP = "webhooks-delivery";
/**
 * The topics whose events the catalog exposes: scheduling's meeting events and revenue's
 * deal, Q&A and insight events, and webhooks' own (a subscription the platform disabled). The other topics carry nothing a subscriber may receive
 * (identity's token, grant, org and user changes and the gateway's delegation audit are
 * internal; email activity is inbound data analytics ingests), so consuming them would only
 * decode and drop every message.
 */
export const DELIVERED_TOPICS = [TOPICS.scheduling, TOPICS.revenue, TOPICS.webhooks];

export interface FanOutDeps {
  db: Db;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
  /** The consumer group (and de-duplication key); DELIVERY_GROUP by default. */
  groupId?: string;
  /**
   * Called with how many attempts a batch queued (when some were), so the worker sends them
   * without waiting for its next poll.
   */
  queued?: (attempts: number) => void;
}

type Deliverable = StoredEvent & { sourceId: string; orgId: string };

/** The event of a message when subscribers may receive it, with its public id (see publicEventId). */
function deliverable(deps: FanOutDeps, message: ConsumedMessage): Deliverable | undefined {
  const event = readOrSkip(deps.logger, message, (m) => {
    const e = decodeEvent(m);
    return EVENT_CATALOG.includes(e.type) ? { ...e, audience: audienceOf(e.type, e.data, m.key) } : undefined;
  });
  if (!event?.audience.deliver) return undefined;
  return {
    id: publicEventId(event.id),
    sourceId: event.id,
    orgId: event.audience.orgId,
    type: event.type,
    data: event.data,
    occurredAt: new Date(event.time),
    ...(event.traceparent ? { traceparent: event.traceparent } : {}),
  };
}

/**
 * Turns consumed events (one message, or a batch of one partition when the consumer is behind)
 * into one pending attempt per enabled subscription of its org that receives its kind, and its
 * entry in the org's event log, in one transaction with the consumer's de-duplication records
 * (and the unique first attempt per event and subscription), so a redelivered message never
 * fans out twice. One transaction for a batch is what lets a consumer that fell behind catch up:
 * its cost is mostly round trips and the commit's flush, not the events. Sending is the
 * worker's job: a slow endpoint never holds up the partition.
 */
async function fanOut(deps: FanOutDeps, messages: ConsumedMessage[]): Promise<void> {
  const events = messages.map((m) => deliverable(deps, m)).filter((e) => e !== undefined);
  let queued = 0;
  await consumeBatchOnce(
    deps.db,
    deps.groupId ?? DELIVERY_GROUP,
    events.map((e) => e.sourceId),
    async (q, fresh) => {
      const store = txStore(q);
      const now = deps.clock.now();
      const receiversOf = new Map<string, SubscriptionRecord[]>();
      // Each org's events to log, in their order.
      const logged = new Map<string, StoredEvent[]>();
      const toQueue: Parameters<typeof store.queueEvents>[0][number][] = [];
      for (const { sourceId, orgId, ...stored } of events) {
        // An id twice in the batch runs once.
        if (!fresh.delete(sourceId)) continue;
        const kind = `${orgId}\u0000${stored.type}`;
        const receivers = receiversOf.get(kind) ?? (await store.receivers(orgId, stored.type));
        receiversOf.set(kind, receivers);
        const attempts = receivers.map((s) =>
          pendingAttempt({
            id: newId("wd_"),
            subscriptionId: s.id,
            event: stored,
            attempt: 1,
            retryStep: 1,
            now,
            trigger: "event",
          }),
        );
        if (attempts.length > 0) toQueue.push({ event: { ...stored, orgId }, attempts });
        const ofOrg = logged.get(orgId);
        if (ofOrg) ofOrg.push(stored);
        else logged.set(orgId, [stored]);
      }
      // Every event's attempts in one statement: an event alone keeps its prepared statement.
      const [only] = toQueue;
      if (toQueue.length === 1 && only) queued += await store.queueEvent(only.event, only.attempts);
      else queued += await store.queueEvents(toQueue);
      // Last, and org by org in one order: appending locks the org's log head until the commit
      // (see EventLogStore.logEvents), and transactions that lock heads in the same order never
      // deadlock.
      for (const [orgId, ofOrg] of [...logged].sort(([a], [b]) => (a < b ? -1 : 1))) {
        const entries = ofOrg.flatMap((stored) => {
          const payload = loggable(deps, stored);
          return payload === undefined
            ? []
            : [{ id: stored.id, type: stored.type, occurredAt: stored.occurredAt, payload }];
        });
        await store.logEvents(orgId, entries);
      }
    },
  );
  if (queued > 0) deps.queued?.(queued);
}

/**
 * The v2 body the log keeps for an event; undefined (logged as an error) when it cannot be
 * rendered, so a malformed event still reaches the subscriptions it did before, whose attempts
 * then fail visibly, instead of blocking its partition.
 */
function loggable(deps: FanOutDeps, event: StoredEvent): string | undefined {
  try {
    return renderPayload(event, "v2");
  } catch (err) {
    deps.logger.error({ err, eventId: event.id, type: event.type }, "event not logged: its v2 body cannot be rendered");
    return undefined;
  }
}

/** Subscribes the fan-out on `bus`; close the subscription before the bus. */
export function startFanOut(deps: FanOutDeps): Promise<Subscription> {
  return deps.bus.subscribe({
    groupId: deps.groupId ?? DELIVERY_GROUP,
    topics: DELIVERED_TOPICS,
    // From the earliest retained event: nothing published before the first start is missed.
    fromBeginning: true,
    handler: (m) => fanOut(deps, [m]),
    batchHandler: (messages) => fanOut(deps, messages),
  });
}
