import { randomBytes } from "node:crypto";
import { metrics } from "@opentelemetry/api";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KafkaBus } from "../src/kafka-bus.js";
import { eventually } from "./helpers.js";

// kafka.consumer.lag on the real broker: per group, topic and partition, as kafkajs reports
// it after each batch, down to zero once the group has consumed everything.
const BROKERS = (process.env.KAFKA_BROKERS ?? "127.0.0.1:19092").split(",").map((b) => b.trim());
const runId = randomBytes(4).toString("hex");
const logger = pino({ level: "silent" });

class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}
const reader = new TestReader();
let bus: KafkaBus;

beforeAll(() => {
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  bus = new KafkaBus({ brokers: BROKERS, clientId: `kit-lag-${runId}`, logger });
});
afterAll(async () => {
  await bus.close();
  metrics.disable();
});

async function lagPoints() {
  const { resourceMetrics } = await reader.collect();
  return (
    resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === "kafka.consumer.lag")
      ?.dataPoints ?? []
  );
}

describe("Kafka consumer lag", () => {
  it("reports the lag of each group's partitions, zero once everything is consumed", async () => {
    const topic = `kit.lag.${runId}`;
    const group = `kit-lag-${runId}`;
    await bus.publish(
      topic,
      Array.from({ length: 30 }, (_, n) => ({ key: "k", value: Buffer.from(String(n)), headers: {} })),
    );
    let seen = 0;
    const sub = await bus.subscribe({
      groupId: group,
      topics: [topic],
      fromBeginning: true,
      handler: async () => {
        seen++;
      },
    });
    try {
      await eventually("all 30 consumed", () => seen >= 30 || undefined);
      const point = await eventually("a lag of zero for the group's partition", async () =>
        (await lagPoints()).find(
          (p) =>
            p.attributes["messaging.consumer.group.name"] === group &&
            p.attributes["messaging.destination.name"] === topic &&
            p.value === 0,
        ),
      );
      expect(point.attributes.partition).toBeDefined();
    } finally {
      await sub.close();
    }
  });
});
