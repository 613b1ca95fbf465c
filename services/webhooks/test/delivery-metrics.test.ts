import { metrics } from "@opentelemetry/api";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { WebhookSubscriptionService } from "@platform/contracts/webhooks";
import { ManualClock } from "@platform/kit/clock";
import { newId } from "@platform/kit/ids";
import { InProcessBus } from "@platform/kit/in-process-bus";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFanOut } from "../src/delivery/fan-out.js";
import { httpSender, systemResolver } from "../src/delivery/sender.js";
import { deliveryWorker } from "../src/delivery/worker.js";
import { build } from "../src/server.js";
import {
  CURSOR_SECRET,
  callerOf,
  meeting,
  openTestDb,
  publishMeetingEvent,
  silentLogger,
  startReceiver,
} from "./builders.js";

class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const reader = new TestReader();
const clock = new ManualClock("2026-01-15T12:00:00Z");
const cleanup: (() => Promise<void>)[] = [];

beforeAll(() => {
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
});
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
  metrics.disable();
});

describe("webhook delivery metrics", () => {
  it("counts every attempt's outcome by event type: succeeded, retry, gone and the disabling", async () => {
    const t = await openTestDb();
    const bus = new InProcessBus({ logger: silentLogger });
    const receiver = await startReceiver();
    cleanup.push(
      () => t.pglite.close(),
      () => bus.close(),
      () => receiver.close(),
    );
    const { routes } = build({ db: t.db, clock, cursorSecret: CURSOR_SECRET, allowPrivateTargets: true });
    const fanOut = await startFanOut({ db: t.db, bus, clock, logger: silentLogger });
    cleanup.push(() => fanOut.close());
    const worker = deliveryWorker({
      db: t.db,
      clock,
      logger: silentLogger,
      sender: httpSender({ allowPrivateTargets: true, resolve: systemResolver, timeoutMs: 2000 }),
      leaseMs: 30_000,
      concurrency: 4,
      perEndpoint: 2,
      pollMs: 20,
      random: () => 0.5,
    });
    const org = newId("org_");
    await callerOf(routes, clock)(WebhookSubscriptionService, org).createWebhookSubscription({
      endpointUrl: receiver.url,
      events: ["scheduling.smartscheduler.booked"],
    });
    receiver.replies.push({ status: 200 }, { status: 503 }, { status: 410 });
    for (let i = 0; i < 2; i++) await publishMeetingEvent(bus, "booked", meeting(org), { at: clock.now() });
    await bus.idle();
    expect(await worker.runOnce()).toBe(2);
    // The retry of the 503 answers 410: the endpoint is gone and the subscription disabled.
    clock.advance(10_000);
    expect(await worker.runOnce()).toBe(1);

    const { resourceMetrics } = await reader.collect();
    const counter = resourceMetrics.scopeMetrics
      .flatMap((s) => s.metrics)
      .find((m) => m.descriptor.name === "webhooks.delivery.outcomes");
    const byOutcome = Object.fromEntries((counter?.dataPoints ?? []).map((p) => [p.attributes.outcome, p.value]));
    expect(byOutcome).toEqual({ succeeded: 1, retry: 1, "disabled:endpoint-gone": 1 });
    expect(
      counter?.dataPoints.every((p) => p.attributes["webhook.event_type"] === "scheduling.smartscheduler.booked"),
    ).toBe(true);
  });

  it("records the receiver's answer time, the freshness of accepted deliveries and the backlog", async () => {
    const { resourceMetrics } = await reader.collect();
    const metric = (name: string) =>
      resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name);
    // Three attempts were answered (200, 503, 410): each has its answer time.
    const duration = metric("webhooks.delivery.duration");
    expect(duration?.descriptor.unit).toBe("s");
    const durations = (duration?.dataPoints ?? []) as { value: { count: number } }[];
    expect(durations.reduce((n, p) => n + p.value.count, 0)).toBe(3);
    // Freshness counts the accepted one alone: the events occurred at the clock's time, 0 s before.
    const freshness = metric("webhooks.delivery.freshness");
    const fresh = (freshness?.dataPoints ?? []) as {
      attributes: Record<string, unknown>;
      value: { count: number; max?: number };
    }[];
    expect(fresh.map((p) => p.value.count)).toEqual([1]);
    expect(fresh[0]?.attributes).toEqual({ "webhook.event_type": "scheduling.smartscheduler.booked" });
    expect(fresh[0]?.value.max).toBeLessThan(5);
    // Nothing is due now: an empty backlog, no age.
    expect(metric("webhooks.delivery.backlog")?.dataPoints.map((p) => p.value)).toEqual([0]);
    expect(metric("webhooks.delivery.backlog.age")?.dataPoints.map((p) => p.value)).toEqual([0]);
  });
});
