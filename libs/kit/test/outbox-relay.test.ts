import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { BusMessage, EventBus, SubscribeOptions } from "../src/bus.js";
import type { Db } from "../src/db.js";
import { InProcessBus } from "../src/in-process-bus.js";
import { decodeEvent, enqueueEvent } from "../src/outbox.js";
import { type OutboxRelay, startOutboxRelay } from "../src/outbox-relay.js";
import { eventually, freshKitDbEachTest, silentLogger, within } from "./helpers.js";

/** An in-process bus whose publish fails while `down` says so, counting attempts. */
class FlakyBus implements EventBus {
  readonly inner = new InProcessBus();
  attempts = 0;
  constructor(public down: (topic: string) => boolean = () => false) {}
  async publish(topic: string, messages: BusMessage[]): Promise<void> {
    this.attempts++;
    if (this.down(topic)) throw new Error("broker unreachable");
    await this.inner.publish(topic, messages);
  }
  subscribe(options: SubscribeOptions) {
    return this.inner.subscribe(options);
  }
  close() {
    return this.inner.close();
  }
}

/** Collects the `n` data field of every event on the topics, in delivery order. */
async function collect(bus: EventBus, topics: string[]): Promise<{ topic: string; n: number; id: string }[]> {
  const seen: { topic: string; n: number; id: string }[] = [];
  await bus.subscribe({
    groupId: "collector",
    topics,
    fromBeginning: true,
    handler: async (m) => {
      const e = decodeEvent(m);
      seen.push({ topic: m.topic, n: (e.data as { n: number }).n, id: e.id });
    },
  });
  return seen;
}

describe("startOutboxRelay", () => {
  let db: Db;
  let relay: OutboxRelay | undefined;
  freshKitDbEachTest((fresh) => {
    db = fresh;
  });
  afterEach(async () => {
    await relay?.stop();
    relay = undefined;
  });

  const write = (topic: string, ns: number[], key = "org_1") =>
    db.tx(async (q) => {
      const ids: string[] = [];
      for (const n of ns)
        ids.push(await enqueueEvent(q, db.schema, { topic, key, type: "x.Happened", source: "test", data: { n } }));
      return ids;
    });
  const unpublished = async () =>
    (await db.query<{ c: number }>(`SELECT count(*)::int AS c FROM ${db.schema}.outbox WHERE published_at IS NULL`))[0]
      ?.c;

  it("publishes committed rows in order as CloudEvents and marks them published", async () => {
    const bus = new FlakyBus();
    const ids = [...(await write("a", [1, 2, 3])), ...(await write("a", [4, 5]))];
    relay = startOutboxRelay({ db, bus, logger: silentLogger, intervalMs: 60_000 });
    expect(await relay.drain()).toBe(5);
    expect(await relay.drain()).toBe(0);
    const seen = await collect(bus, ["a"]);
    await within("delivery", bus.inner.idle());
    expect(seen.map((e) => e.n)).toEqual([1, 2, 3, 4, 5]);
    expect(seen.map((e) => e.id)).toEqual(ids);
    expect(await unpublished()).toBe(0);
  });

  it("keeps failed rows and retries them until the bus is back: nothing lost, order kept", async () => {
    let failuresLeft = 3;
    const bus = new FlakyBus(() => failuresLeft-- > 0);
    const seen = await collect(bus, ["a"]);
    await write("a", [1, 2]);
    await write("a", [3]);
    relay = startOutboxRelay({ db, bus, logger: silentLogger, intervalMs: 5, minBackoffMs: 5, maxBackoffMs: 20 });
    // Rows written while publishing fails wait behind the failed ones.
    await eventually("a failed attempt", () => (bus.attempts > 0 ? true : undefined));
    await write("a", [4, 5]);
    await eventually("all delivered", async () => ((await unpublished()) === 0 ? true : undefined));
    await within("delivery", bus.inner.idle());
    expect(seen.map((e) => e.n)).toEqual([1, 2, 3, 4, 5]);
    const rows = await db.query<{ attempts: number; last_error: string | null }>(
      `SELECT attempts, last_error FROM ${db.schema}.outbox ORDER BY seq`,
    );
    expect(rows[0]?.attempts).toBe(3);
    expect(rows.every((r) => r.last_error === null)).toBe(true);
  });

  it("records the error and backs off a failed row", async () => {
    const bus = new FlakyBus(() => true);
    await write("a", [1]);
    relay = startOutboxRelay({
      db,
      bus,
      logger: silentLogger,
      intervalMs: 60_000,
      minBackoffMs: 60_000,
      maxBackoffMs: 60_000,
    });
    expect(await relay.drain()).toBe(0);
    const [row] = await db.query<{ attempts: number; last_error: string; due_in_s: number }>(
      `SELECT attempts, last_error, extract(epoch FROM next_attempt_at - now())::float8 AS due_in_s FROM ${db.schema}.outbox`,
    );
    expect(row?.attempts).toBe(1);
    expect(row?.last_error).toBe("broker unreachable");
    expect(row?.due_in_s).toBeGreaterThan(30);
    // Still backing off: later rows of the topic must not overtake it.
    bus.down = () => false;
    await write("a", [2]);
    expect(await relay.drain()).toBe(0);
    expect(await unpublished()).toBe(2);
  });

  it("does not hold back other topics while one topic backs off", async () => {
    const bus = new FlakyBus((topic) => topic === "a");
    const seen = await collect(bus, ["a", "b"]);
    await write("a", [1]);
    await write("b", [2, 3]);
    relay = startOutboxRelay({
      db,
      bus,
      logger: silentLogger,
      intervalMs: 60_000,
      minBackoffMs: 60_000,
      maxBackoffMs: 60_000,
    });
    expect(await relay.drain()).toBe(2);
    await within("delivery", bus.inner.idle());
    expect(seen.map((e) => `${e.topic}${e.n}`)).toEqual(["b2", "b3"]);
  });

  it("publishes in batches of batchSize until drained", async () => {
    const bus = new FlakyBus();
    const ns = Array.from({ length: 25 }, (_, i) => i);
    await write("a", ns);
    relay = startOutboxRelay({ db, bus, logger: silentLogger, intervalMs: 60_000, batchSize: 10 });
    expect(await relay.drain()).toBe(25);
    expect(bus.attempts).toBe(3);
  });

  it("publishes soon after notify() without waiting for the poll", async () => {
    const bus = new FlakyBus();
    const seen = await collect(bus, ["a"]);
    relay = startOutboxRelay({ db, bus, logger: silentLogger, intervalMs: 60_000 });
    await relay.drain();
    await write("a", [1]);
    relay.notify();
    await eventually("notified delivery", () => (seen.length === 1 ? true : undefined), 5_000);
  });

  it("publishes a row as soon as its transaction commits, without notify() and without a poll", async () => {
    const bus = new FlakyBus();
    const seen = await collect(bus, ["a"]);
    relay = startOutboxRelay({ db, bus, logger: silentLogger, intervalMs: 60_000, idleIntervalMs: 60_000 });
    await relay.drain();
    await write("a", [1, 2]);
    await eventually("delivery after the commit", () => (seen.length === 2 ? true : undefined), 5_000);
    // A transaction that rolls back wakes nothing and leaves nothing to publish.
    await expect(
      db.tx(async (q) => {
        await enqueueEvent(q, db.schema, {
          topic: "a",
          key: "org_1",
          type: "x.Happened",
          source: "test",
          data: { n: 3 },
        });
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    await write("a", [4]);
    await eventually("the next commit", () => (seen.length === 3 ? true : undefined), 5_000);
    expect(seen.map((e) => e.n)).toEqual([1, 2, 4]);
  });

  it("after a round of several rows, sends rows committed within lingerMs together", async () => {
    const bus = new FlakyBus();
    const seen = await collect(bus, ["a"]);
    relay = startOutboxRelay({ db, bus, logger: silentLogger, intervalMs: 60_000, lingerMs: 2_000 });
    await write("a", [1]);
    relay.notify();
    await eventually("a lone row, sent at once", () => (seen.length === 1 ? true : undefined), 5_000);
    await write("a", [2, 3]);
    relay.notify();
    await eventually("a round of two rows", () => (seen.length === 3 ? true : undefined), 5_000);
    const before = bus.attempts;
    // Two commits, each notifying, inside the linger: one round and one publish for both
    // (without the linger, the first would have gone alone during the pause).
    await write("a", [4]);
    relay.notify();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await write("a", [5]);
    relay.notify();
    await eventually("lingered rows", () => (seen.length === 5 ? true : undefined), 10_000);
    expect(bus.attempts - before).toBe(1);
    expect(seen.map((e) => e.n)).toEqual([1, 2, 3, 4, 5]);
  });

  it("sends a row at once after a round of one row", async () => {
    const bus = new FlakyBus();
    const seen = await collect(bus, ["a"]);
    relay = startOutboxRelay({ db, bus, logger: silentLogger, intervalMs: 60_000, lingerMs: 60_000 });
    for (const n of [1, 2, 3]) {
      await write("a", [n]);
      relay.notify();
      // Lingering would hold the second row for a minute.
      await eventually(`row ${n}`, () => (seen.length === n ? true : undefined), 5_000);
    }
  });

  it("purges rows published more than 7 days ago", async () => {
    const [oldId, recentId] = await write("a", [1, 2]);
    await db.query(`UPDATE ${db.schema}.outbox SET published_at = now() - interval '8 days' WHERE id = $1`, [oldId]);
    await db.query(`UPDATE ${db.schema}.outbox SET published_at = now() - interval '1 day' WHERE id = $1`, [recentId]);
    relay = startOutboxRelay({ db, bus: new FlakyBus(), logger: silentLogger, intervalMs: 60_000 });
    await eventually("purge", async () => {
      const ids = (await db.query<{ id: string }>(`SELECT id FROM ${db.schema}.outbox`)).map((r) => r.id);
      return ids.length === 1 ? ids : undefined;
    }).then((ids) => expect(ids).toEqual([recentId]));
  });

  it("stops polling on stop()", async () => {
    const bus = new FlakyBus();
    relay = startOutboxRelay({ db, bus, logger: silentLogger, intervalMs: 5 });
    await relay.stop();
    await write("a", [1]);
    await new Promise((r) => setTimeout(r, 50));
    expect(await unpublished()).toBe(1);
  });

  /** Rows of one topic written by three requests: two in traces of their own, one untraced. */
  async function writeInThreeRequests(): Promise<void> {
    const inTrace = (traceId: string, fn: () => Promise<unknown>) =>
      context.with(
        trace.setSpan(context.active(), trace.wrapSpanContext({ traceId, spanId: "00f067aa0ba902b7", traceFlags: 1 })),
        fn,
      );
    await inTrace("1".repeat(32), () => write("a", [1, 2]));
    await inTrace("2".repeat(32), () => write("a", [3]));
    await write("a", [4]);
  }

  /** A bus that records each publish: the trace active around it and its messages' traceparents. */
  function publishSpy(bus: EventBus) {
    const publishes: { traceId: string | undefined; traceparents: (string | undefined)[] }[] = [];
    const spy: EventBus = {
      publish: async (topic, messages) => {
        publishes.push({
          traceId: trace.getSpanContext(context.active())?.traceId,
          traceparents: messages.map((m) => m.headers.traceparent),
        });
        await bus.publish(topic, messages);
      },
      subscribe: (o) => bus.subscribe(o),
      close: () => bus.close(),
    };
    return { spy, publishes };
  }

  describe("with W3C trace context", () => {
    beforeAll(() => {
      context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
      propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    });
    afterAll(() => {
      context.disable();
      propagation.disable();
    });

    describe("and no tracer provider (no exporter)", () => {
      it("publishes a topic's rows in one request, each message with its own traceparent", async () => {
        const { spy, publishes } = publishSpy(new FlakyBus());
        await writeInThreeRequests();
        relay = startOutboxRelay({ db, bus: spy, logger: silentLogger, intervalMs: 60_000 });
        expect(await relay.drain()).toBe(4);
        expect(publishes).toHaveLength(1);
        expect(publishes[0]?.traceparents.map((t) => t?.split("-")[1])).toEqual([
          "1".repeat(32),
          "1".repeat(32),
          "2".repeat(32),
          undefined,
        ]);
      });
    });

    describe("and a tracer provider (OpenTelemetry active)", () => {
      beforeAll(() => {
        trace.setGlobalTracerProvider(new BasicTracerProvider());
      });
      afterAll(() => {
        trace.disable();
      });

      it("publishes each event inside the trace of the request that wrote it", async () => {
        const { spy, publishes } = publishSpy(new FlakyBus());
        await writeInThreeRequests();
        relay = startOutboxRelay({ db, bus: spy, logger: silentLogger, intervalMs: 60_000 });
        expect(await relay.drain()).toBe(4);
        expect(publishes.map((p) => p.traceId)).toEqual(["1".repeat(32), "2".repeat(32), undefined]);
      });
    });
  });
});
