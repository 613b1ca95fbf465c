import type { ConsumedMessage, EventBus, Subscription } from "@platform/kit/bus";
import type { Clock } from "@platform/kit/clock";
import { consumeOnce } from "@platform/kit/consumer";
import type { Db } from "@platform/kit/db";
import { type EventEnvelope, TOPICS } from "@platform/kit/events";
import { newId } from "@platform/kit/ids";
import type { Logger } from "@platform/kit/logger";
import { decodeEvent } from "@platform/kit/outbox";
import { EVENT_CATALOG } from "../domain/catalog.js";
import { type Audience, audienceOf } from "../domain/payload.js";
import { webhooksStore } from "../store/webhooks.store.js";

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
 * receives its kind, in one transaction with the consumer's de-duplication record (and the
 * unique first attempt per event and subscription), so a redelivered message never fans out
 * twice. Sending is the worker's job: a slow endpoint never holds up the partition.
 */
async function fanOut(deps: FanOutDeps, message: ConsumedMessage): Promise<void> {
  let event: EventEnvelope;
  let audience: Audience;
  try {
    event = decodeEvent(message);
    if (!EVENT_CATALOG.includes(event.type)) return;
    audience = audienceOf(event.type, event.data, message.key);
  } catch (err) {
    // Redelivering an unreadable message would only block its partition.
    deps.logger.error(
      { err, topic: message.topic, partition: message.partition, offset: message.offset },
      "unreadable event skipped",
    );
    return;
  }
  if (!audience.deliver) return;
  const { orgId } = audience;
  let queued = 0;
  await consumeOnce(deps.db, deps.groupId ?? DELIVERY_GROUP, event.id, async (q) => {
    const store = webhooksStore(q);
    const receivers = await store.receivers(orgId, event.type);
    if (receivers.length === 0) return;
    await store.insertEvent({
      id: event.id,
      orgId,
      type: event.type,
      data: event.data,
      occurredAt: new Date(event.time),
      ...(event.traceparent ? { traceparent: event.traceparent } : {}),
    });
    const now = deps.clock.now();
    for (const s of receivers) {
      const inserted = await store.insertAttempt({
        id: newId("wd_"),
        subscriptionId: s.id,
        eventId: event.id,
        attempt: 1,
        trigger: "event",
        status: "pending",
        scheduledAt: now,
        attemptedAt: null,
        responseStatus: null,
        durationMs: null,
        error: null,
        nextRetryAt: null,
        retryStep: 1,
        createdAt: now,
      });
      if (inserted) queued++;
    }
  });
  if (queued > 0) deps.queued?.();
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
