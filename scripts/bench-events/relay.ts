import { openPg } from "@platform/kit/db";
import { KafkaBus } from "@platform/kit/kafka-bus";
import { kitMigrations, migrate } from "@platform/kit/migrate";
import { enqueueEvent } from "@platform/kit/outbox";
import { startOutboxRelay } from "@platform/kit/outbox-relay";
import { pct, sleep } from "../bench-support.js";
import { fmt, freshDatabase, KAFKA_BROKERS, logger, prefix, rate, report, run, seconds } from "./context.js";

// ---------------------------------------------------------------- relay: commit → Kafka

export async function relayLatency(): Promise<void> {
  const url = await freshDatabase(`${prefix}bench_relay`);
  const db = openPg({ url, schema: "bench" });
  await migrate(db, [kitMigrations]);
  const topic = `bench.relay.${run}`;
  const bus = new KafkaBus({ brokers: KAFKA_BROKERS.split(","), clientId: "bench-relay", logger });
  const consumerBus = new KafkaBus({ brokers: KAFKA_BROKERS.split(","), clientId: "bench-relay-consumer", logger });
  const committedAt = new Map<string, number>();
  const latencies: number[] = [];
  let expected = 0;
  let allArrived: () => void = () => {};
  const arrivedAll = new Promise<void>((r) => {
    allArrived = r;
  });
  const sub = await consumerBus.subscribe({
    groupId: `bench-relay-${run}`,
    topics: [topic],
    fromBeginning: true,
    handler: async (m) => {
      const at = performance.now();
      const id = m.headers.ce_id ?? "";
      const c = committedAt.get(id);
      if (c !== undefined) latencies.push(at - c);
      if (latencies.length >= expected && expected > 0) allArrived();
    },
  });
  const relay = startOutboxRelay({ db, bus, logger });
  // Warm-up: the producer connects and the topic exists before the measured events.
  // The commit wakes the relay (onOutboxCommit), as every service's does.
  await db.tx((q) => enqueueEvent(q, "bench", { topic, key: "warm", type: "bench.warm", source: "bench", data: {} }));
  await sleep(3000);
  const total = rate * seconds;
  expected = total;
  const start = performance.now() + 50;
  const sends: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    sends.push(
      (async () => {
        const id = await db.tx((q) =>
          enqueueEvent(q, "bench", { topic, key: `org_${i % 10}`, type: "bench.tick", source: "bench", data: { i } }),
        );
        committedAt.set(id, performance.now());
      })(),
    );
  }
  await Promise.all(sends);
  await Promise.race([arrivedAll, sleep(20_000)]);
  latencies.sort((a, b) => a - b);
  report(
    `commit → Kafka at ${rate}/s for ${seconds} s (open loop, one outbox row per transaction): ${latencies.length}/${total} arrived; ` +
      `p50 **${fmt(pct(latencies, 50))} ms**, p99 **${fmt(pct(latencies, 99))} ms**, max ${fmt(latencies.at(-1) ?? Number.NaN)} ms`,
  );
  await relay.stop();
  await sub.close();
  await consumerBus.close();
  await bus.close();
  await db.close();
}
