import { metrics } from "@opentelemetry/api";
import type { Clock } from "@platform/kit/clock";
import type { Db } from "@platform/kit/db";

/**
 * What an SRE alerts on for webhook delivery. Labels are bounded: the event type (a closed
 * list) and the outcome; never a subscription, organization or endpoint.
 *  - webhooks.delivery.outcomes: attempts by outcome (succeeded, retry, gave-up, gone, disabled:<reason>);
 *  - webhooks.delivery.duration: how long the receiver took to answer one attempt (s);
 *  - webhooks.delivery.freshness: from the event's occurrence to its successful delivery (s),
 *    the SLI of the freshness SLO (deploy/prometheus/rules);
 *  - webhooks.delivery.backlog / .backlog.age: attempts due and not yet sent, and how long the
 *    oldest has waited (s), read from the database at each collection.
 * Made when the worker starts, not at import, so they bind to the provider telemetry set up.
 */
export interface DeliveryMetrics {
  record(a: { eventType: string; outcome: string; durationMs: number; occurredAt?: Date; sentAt: Date }): void;
}

export function deliveryMetrics(db: Db, clock: Clock): DeliveryMetrics {
  const meter = metrics.getMeter("@platform/webhooks");
  const outcomes = meter.createCounter("webhooks.delivery.outcomes", {
    description:
      "Webhook delivery attempts by outcome (succeeded, retry, gave-up, gone, disabled:<reason>) and event type",
  });
  // Buckets around the freshness objective (30 s by default) and the receiver's timeout.
  const duration = meter.createHistogram("webhooks.delivery.duration", {
    description: "Time a receiver took to answer a delivery attempt",
    unit: "s",
    advice: { explicitBucketBoundaries: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] },
  });
  const freshness = meter.createHistogram("webhooks.delivery.freshness", {
    description: "Time from an event's occurrence to its successful delivery",
    unit: "s",
    advice: { explicitBucketBoundaries: [0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600] },
  });
  const backlog = meter.createObservableGauge("webhooks.delivery.backlog", {
    description: "Delivery attempts due and not yet sent",
  });
  const backlogAge = meter.createObservableGauge("webhooks.delivery.backlog.age", {
    description: "How long the oldest due attempt has waited",
    unit: "s",
  });
  meter.addBatchObservableCallback(
    async (result) => {
      try {
        const now = clock.now();
        const [row] = await db.lazy.query<{ n: number; oldest: Date | string | null }>(
          `SELECT count(*)::int AS n, min(scheduled_at) AS oldest FROM webhooks.attempts
            WHERE status = 'pending' AND scheduled_at <= $1`,
          [now],
        );
        result.observe(backlog, Number(row?.n ?? 0));
        const oldest = row?.oldest ? new Date(row.oldest).getTime() : now.getTime();
        result.observe(backlogAge, Math.max(0, (now.getTime() - oldest) / 1000));
      } catch {
        // The database is away: no sample (the scrape still answers), and its own alerts say so.
      }
    },
    [backlog, backlogAge],
  );
  return {
    record(a: { eventType: string; outcome: string; durationMs: number; occurredAt?: Date; sentAt: Date }): void {
      const labels = { "webhook.event_type": a.eventType };
      outcomes.add(1, { ...labels, outcome: a.outcome });
      if (a.durationMs > 0) duration.record(a.durationMs / 1000, labels);
      if (a.outcome === "succeeded" && a.occurredAt)
        freshness.record(Math.max(0, (a.sentAt.getTime() + a.durationMs - a.occurredAt.getTime()) / 1000), labels);
    },
  };
}
