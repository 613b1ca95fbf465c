import type { Clock } from "@platform/kit/clock";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import type { OutboxEvent } from "@platform/kit/outbox";
import { HEALTH_WINDOW_MS, type Health, healthOf, NO_ATTEMPTS } from "../domain/health.js";
import type { SubscriptionRecord } from "../domain/model.js";
import type { TxStore } from "../store/index.js";

/** The health of each subscription (status, last success and failure, recent success rate), by id. */
export async function healthOfAll(
  r: Pick<TxStore, "attemptStats">,
  clock: Clock,
  subscriptions: readonly SubscriptionRecord[],
): Promise<Map<string, Health>> {
  const since = new Date(clock.now().getTime() - HEALTH_WINDOW_MS);
  const stats = await r.attemptStats(
    subscriptions.map((s) => s.id),
    since,
  );
  return new Map(subscriptions.map((s) => [s.id, healthOf(s, stats.get(s.id) ?? NO_ATTEMPTS)]));
}

/**
 * The catalog event webhooks.subscription.disabled of a subscription the platform disabled
 * (failing, endpoint-gone), for the outbox of the transaction that disables it: the fan-out
 * logs it in the org's event log and delivers it to the org's other subscriptions that name
 * it (the disabled one receives nothing any more). Keyed by the org, like every event.
 */
export function subscriptionDisabledEvent(
  s: Pick<SubscriptionRecord, "id" | "orgId" | "endpointUrl">,
  reason: "failing" | "endpoint-gone",
  at: Date,
): OutboxEvent {
  return {
    topic: TOPICS.webhooks,
    key: s.orgId,
    type: EVENT_TYPES.webhookSubscriptionDisabled,
    source: "webhooks",
    subject: s.id,
    // The proto JSON of platform.events.webhooks.v1.SubscriptionDisabled.
    data: { subscriptionId: s.id, endpointUrl: s.endpointUrl, reason, disabledAt: at.toISOString(), orgId: s.orgId },
    time: at,
  };
}
