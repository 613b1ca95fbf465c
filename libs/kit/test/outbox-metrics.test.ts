import { metrics } from "@opentelemetry/api";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BusMessage, EventBus, SubscribeOptions } from "../src/bus.js";
import { InProcessBus } from "../src/in-process-bus.js";
import { enqueueEvent } from "../src/outbox.js";
import { startOutboxRelay } from "../src/outbox-relay.js";
import { kitPglite, silentLogger } from "./helpers.js";

class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** A bus that is down until `up` is set. */
class SwitchableBus implements EventBus {
  readonly inner = new InProcessBus();
  up = false;
  async publish(topic: string, messages: BusMessage[]): Promise<void> {
    if (!this.up) throw new Error("broker unreachable");
    await this.inner.publish(topic, messages);
  }
  subscribe(options: SubscribeOptions) {
    return this.inner.subscribe(options);
  }
  close() {
    return this.inner.close();
  }
}

const reader = new TestReader();
let pglite: Awaited<ReturnType<typeof kitPglite>>;

beforeAll(async () => {
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  pglite = await kitPglite();
});
afterAll(async () => {
  metrics.disable();
  await pglite.close();
});

async function gauges(): Promise<Record<string, number>> {
  const { resourceMetrics } = await reader.collect();
  const out: Record<string, number> = {};
  for (const m of resourceMetrics.scopeMetrics.flatMap((s) => s.metrics)) {
    const point = m.dataPoints[0];
    if (point && typeof point.value === "number") out[m.descriptor.name] = point.value;
  }
  return out;
}

describe("outbox metrics", () => {
  it("reports what waits for the bus (outbox.pending, outbox.lag) and zero once it is published", async () => {
    const db = await pglite.fresh();
    const bus = new SwitchableBus();
    const relay = startOutboxRelay({ db, bus, logger: silentLogger, intervalMs: 20 });
    try {
      await db.tx(async (q) => {
        for (let n = 0; n < 3; n++) {
          await enqueueEvent(q, db.schema, { topic: "t", key: "k", type: "x.Happened", source: "test", data: { n } });
        }
      });
      const waiting = await gauges();
      expect(waiting["outbox.pending"]).toBe(3);
      expect(waiting["outbox.lag"]).toBeGreaterThanOrEqual(0);
      bus.up = true;
      expect(await relay.drain()).toBe(3);
      expect(await gauges()).toMatchObject({ "outbox.pending": 0, "outbox.lag": 0 });
    } finally {
      await relay.stop();
    }
  });
});
