import type { ConsumedMessage, EventBus, Subscription } from "@platform/kit/bus";
import type { Clock } from "@platform/kit/clock";
import { consumeOnce, readOrSkip } from "@platform/kit/consumer";
import type { Db } from "@platform/kit/db";
import { TOPICS } from "@platform/kit/events";
import { newId } from "@platform/kit/ids";
import type { Logger } from "@platform/kit/logger";
import { decodeEvent } from "@platform/kit/outbox";
import { pendingAttempt } from "../domain/attempt.js";
import { EVENT_CATALOG } from "../domain/catalog.js";
import { publicEventId } from "../domain/event-log.js";
import { audienceOf, renderPayload, type StoredEvent } from "../domain/payload.js";
import { txStore } from "../store/index.js";

/** The default consumer group of the fan-out. */
export const DELIVERY_GROUP = "webhooks-delivery";
/**
 * The topics whose events the catalog exposes: scheduling's meeting events and revenue's
 * deal, Q&A and insight events. The other topics carry nothing a subscriber may receive
 * (identity's token, grant, org and user changes and the gateway's delegation audit are
 * internal; email activity is inbound data analytics ingests), so consuming them would only
 * decode and drop every message.
 */
export const DELIVERED_TOPICS = [TOPICS.scheduling, TOPICS.revenue];

export interface FanOutDeps {
  db: Db;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
  /** The consumer group (and de-duplication key); DELIVERY_GROUP by default. */
  groupId?: string;
  /** Called after an event queued attempts, so the worker sends them without waiting for its next poll. */
  queued?: () => void;
}

/**
 * Turns a consumed event into one pending attempt per enabled subscription of its org that
 * receives its kind, and its entry in the org's event log, in one transaction with the
 * consumer's de-duplication record (and the unique first attempt per event and subscription),
 * so a redelivered message never fans out twice. Sending is the worker's job: a slow endpoint never holds up the partition.
 */
async function fanOut(deps: FanOutDeps, message: ConsumedMessage): Promise<void> {
  const event = readOrSkip(deps.logger, message, (m) => {
    const e = decodeEvent(m);
    return EVENT_CATALOG.includes(e.type) ? { ...e, audience: audienceOf(e.type, e.data, m.key) } : undefined;
  });
  if (!event?.audience.deliver) return;
  const { orgId } = event.audience;
  // Deliveries and the event log carry the public id, derived from the producer's (see publicEventId).
  const stored: StoredEvent = {
    id: publicEventId(event.id),
    type: event.type,
    data: event.data,
    occurredAt: new Date(event.time),
    ...(event.traceparent ? { traceparent: event.traceparent } : {}),
  };
  let queued = 0;
  await consumeOnce(deps.db, deps.groupId ?? DELIVERY_GROUP, event.id, async (q) => {
    const store = txStore(q);
    const receivers = await store.receivers(orgId, event.type);
    const now = deps.clock.now();
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
    if (attempts.length > 0) queued = await store.queueEvent({ ...stored, orgId }, attempts);
    // Last: appending locks the org's log head until the commit (see EventLogStore.logEvent).
    const payload = loggable(deps, stored);
    if (payload !== undefined) {
      await store.logEvent({
        id: stored.id,
        orgId,
        type: stored.type,
        occurredAt: stored.occurredAt,
        payload,
      });
    }
  });
  if (queued > 0) deps.queued?.();
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
    handler: (m) => fanOut(deps, m),
  });
}
