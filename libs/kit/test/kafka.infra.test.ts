import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type Admin, Kafka, logLevel } from "kafkajs";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ConsumedMessage, EventBus } from "../src/bus.js";
import { type Db, openPg } from "../src/db.js";
import { KafkaBus } from "../src/kafka-bus.js";
import { kitMigrations, migrate } from "../src/migrate.js";
import { decodeEvent, enqueueEvent } from "../src/outbox.js";
import { type OutboxRelay, startOutboxRelay } from "../src/outbox-relay.js";
import { eventually, throwawayDatabase } from "./helpers.js";

// Real Postgres and Kafka: `bash scripts/kafka.sh start` runs the default broker beforehand.
const BROKERS = (process.env.KAFKA_BROKERS ?? "127.0.0.1:19092").split(",").map((b) => b.trim());
const KAFKA_SCRIPT = fileURLToPath(new URL("../../../scripts/kafka.sh", import.meta.url));
const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
const runId = randomBytes(4).toString("hex");

const execFileAsync = promisify(execFile);

async function openSchema(schema: string): Promise<Db> {
  const db = openPg({ url: database.url, schema, max: 4 });
  await migrate(db, [kitMigrations]);
  return db;
}

const dbs: Db[] = [];

let database: Awaited<ReturnType<typeof throwawayDatabase>>;

beforeAll(async () => {
  database = await throwawayDatabase("kit_it");
});

afterAll(async () => {
  await Promise.all(dbs.map((db) => db.close()));
  await database.drop();
});

describe("outbox to Kafka", () => {
  let db: Db;
  let bus: EventBus;
  let relay: OutboxRelay;

  beforeAll(async () => {
    db = await openSchema("kit_it_delivery");
    dbs.push(db);
    bus = new KafkaBus({ brokers: BROKERS, clientId: `kit-it-${runId}`, logger });
    relay = startOutboxRelay({ db, bus, logger, intervalMs: 100 });
  });

  afterAll(async () => {
    await relay?.stop();
    await bus?.close();
  });

  it("delivers an outboxed event to a consumer with CloudEvents headers", async () => {
    const topic = `kit-it-${runId}-delivery`;
    const received: ConsumedMessage[] = [];
    await bus.subscribe({
      groupId: `kit-it-${runId}-delivery`,
      topics: [topic],
      fromBeginning: true,
      handler: async (m) => {
        received.push(m);
      },
    });
    const time = new Date("2026-01-15T12:00:00.000Z");
    const id = await db.tx((q) =>
      enqueueEvent(q, db.schema, {
        topic,
        key: "org_1",
        type: "platform.test.v1.ThingHappened",
        source: "kit-it",
        subject: "thing_1",
        data: { thingId: "thing_1", count: 2 },
        time,
      }),
    );
    relay.notify();
    const [m] = await eventually("the event on Kafka", () => (received.length > 0 ? received : undefined), 30_000);
    expect(m?.key).toBe("org_1");
    expect(m?.headers).toMatchObject({
      ce_specversion: "1.0",
      ce_id: id,
      ce_type: "platform.test.v1.ThingHappened",
      ce_source: "kit-it",
      ce_subject: "thing_1",
      ce_time: time.toISOString(),
      "content-type": "application/json",
    });
    expect(decodeEvent(m!)).toMatchObject({ id, data: { thingId: "thing_1", count: 2 } });
    // The relay marks the row once Kafka acknowledged it, so a fast consumer can see the
    // message just before that commit.
    const publishedAt = await eventually(
      "the row marked published",
      async () => {
        const [row] = await db.query<{ published_at: Date | null }>(
          `SELECT published_at FROM ${db.schema}.outbox WHERE id = $1`,
          [id],
        );
        return row?.published_at ?? undefined;
      },
      10_000,
    );
    expect(publishedAt).toBeInstanceOf(Date);
  });

  it("redelivers a message whose handler threw", async () => {
    const topic = `kit-it-${runId}-redelivery`;
    const attempts: string[] = [];
    const handled: string[] = [];
    await bus.subscribe({
      groupId: `kit-it-${runId}-redelivery`,
      topics: [topic],
      fromBeginning: true,
      handler: async (m) => {
        const { id } = decodeEvent(m);
        attempts.push(id);
        if (attempts.length === 1) throw new Error("transient handler failure");
        handled.push(id);
      },
    });
    const id = await db.tx((q) =>
      enqueueEvent(q, db.schema, { topic, key: "org_1", type: "platform.test.v1.X", source: "kit-it", data: {} }),
    );
    relay.notify();
    await eventually("the redelivered event", () => (handled.length > 0 ? true : undefined), 60_000);
    expect(attempts).toEqual([id, id]);
    expect(handled).toEqual([id]);
  });
  it("hands a batchHandler the partition's messages in order, and the whole slice again after a throw", async () => {
    const topic = `kit-it-${runId}-batches`;
    // Published before the consumer starts, so its first fetch holds several of them.
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      ids.push(
        await db.tx((q) =>
          enqueueEvent(q, db.schema, {
            topic,
            key: "org_1",
            type: "platform.test.v1.X",
            source: "kit-it",
            data: { i },
          }),
        ),
      );
    }
    relay.notify();
    await relay.drain();
    const batches: string[][] = [];
    const handled: string[] = [];
    await bus.subscribe({
      groupId: `kit-it-${runId}-batches`,
      topics: [topic],
      fromBeginning: true,
      handler: async () => {
        throw new Error("the Kafka bus calls batchHandler when there is one");
      },
      batchHandler: async (messages) => {
        const batch = messages.map((m) => decodeEvent(m).id);
        batches.push(batch);
        if (batches.length === 1) throw new Error("transient failure of the first slice");
        handled.push(...batch);
      },
    });
    await eventually("every event handled", () => (handled.length >= ids.length ? true : undefined), 60_000);
    expect(handled).toEqual(ids);
    // The failed slice came again from its first message.
    expect(batches[1]?.slice(0, batches[0]?.length)).toEqual(batches[0]);
    expect(batches.some((b) => b.length > 1)).toBe(true);
  });
});

describe("offset commits", () => {
  let admin: Admin;
  const buses: EventBus[] = [];

  beforeAll(async () => {
    admin = new Kafka({ brokers: BROKERS, clientId: `kit-it-${runId}-offsets`, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
  });

  afterAll(async () => {
    await Promise.all(buses.map((b) => b.close()));
    await admin?.disconnect();
  });

  /** The group's committed offset, summed over the topic's partitions (all of them: one key). */
  const committed = async (groupId: string, topic: string) => {
    const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return (offsets?.partitions ?? []).reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
  };

  /** Publishes `count` messages one at a time, each waiting until the consumer has handled it: a batch each. */
  async function oneByOne(publisher: EventBus, topic: string, handled: string[], count: number) {
    for (let i = 0; i < count; i++) {
      const value = `m${handled.length}`;
      await publisher.publish(topic, [{ key: "k", value: Buffer.from(value), headers: {} }]);
      await eventually(`${value} handled`, () => (handled.includes(value) ? true : undefined), 30_000);
    }
  }

  /** A publisher, and a consumer with `commitIntervalMs` recording what it handled, on a topic and group named `name`. */
  async function consuming(name: string, commitIntervalMs: number) {
    const topic = `kit-it-${runId}-${name}`;
    const groupId = topic;
    const publisher = new KafkaBus({ brokers: BROKERS, clientId: `${topic}-pub`, logger });
    const consumer = new KafkaBus({ brokers: BROKERS, clientId: topic, logger, commitIntervalMs });
    buses.push(publisher, consumer);
    const handled: string[] = [];
    const subscription = await consumer.subscribe({
      groupId,
      topics: [topic],
      fromBeginning: true,
      handler: async (m) => {
        handled.push(m.value.toString());
      },
    });
    return { topic, groupId, publisher, handled, subscription };
  }

  it("commits on a cadence, not after every batch, and everything handled when the subscription closes", async () => {
    // An interval longer than the test: only the first batch and the close commit.
    const { topic, groupId, publisher, handled, subscription } = await consuming("cadence", 600_000);
    await oneByOne(publisher, topic, handled, 1);
    await eventually(
      "the first batch committed at once",
      async () => ((await committed(groupId, topic)) === 1 ? true : undefined),
      10_000,
    );
    await oneByOne(publisher, topic, handled, 4);
    // kafkajs's auto commit would have committed each of these batches by now.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await committed(groupId, topic)).toBe(1);
    await subscription.close();
    expect(await committed(groupId, topic)).toBe(5);
  });

  it("commits what was handled within the interval once it ends, with no further batch", async () => {
    const { topic, groupId, publisher, handled } = await consuming("trailing", 2_000);
    await oneByOne(publisher, topic, handled, 3);
    await eventually(
      "all three committed",
      async () => ((await committed(groupId, topic)) === 3 ? true : undefined),
      20_000,
    );
    expect(handled).toEqual(["m0", "m1", "m2"]);
  });
});

describe("Kafka outage", () => {
  // A broker of this test's own, so stopping it cannot disturb anything else.
  const port = process.env.KIT_IT_OUTAGE_KAFKA_PORT ?? "19192";
  const controllerPort = process.env.KIT_IT_OUTAGE_KAFKA_CONTROLLER_PORT ?? "19193";
  let dataDir: string;
  let started = false;
  let db: Db;
  let bus: EventBus;
  let relay: OutboxRelay | undefined;

  const kafka = (command: "start" | "stop") =>
    execFileAsync("bash", [KAFKA_SCRIPT, command], {
      env: { ...process.env, KAFKA_PORT: port, KAFKA_CONTROLLER_PORT: controllerPort, KAFKA_DATA_DIR: dataDir },
      timeout: 150_000,
    });

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "kit-it-kafka-"));
    started = true;
    await kafka("start");
    db = await openSchema("kit_it_outage");
    dbs.push(db);
    bus = new KafkaBus({ brokers: [`127.0.0.1:${port}`], clientId: `kit-it-${runId}-outage`, logger });
  });

  afterAll(async () => {
    await relay?.stop();
    await bus?.close();
    if (started) await kafka("stop");
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("keeps events written while the broker is down and delivers them once, in order, after it returns", async () => {
    const topic = `kit-it-${runId}-outage`;
    const write = (n: number) =>
      db.tx((q) =>
        enqueueEvent(q, db.schema, {
          topic,
          key: "org_1",
          type: "platform.test.v1.Counted",
          source: "kit-it",
          data: { n },
        }),
      );
    const pending = async () =>
      (
        await db.query<{ c: number }>(`SELECT count(*)::int AS c FROM ${db.schema}.outbox WHERE published_at IS NULL`)
      )[0]?.c;

    relay = startOutboxRelay({ db, bus, logger, intervalMs: 100 });
    // A warm-up event: the producer is connected when the broker goes away, as in production.
    await write(0);
    relay.notify();
    await eventually("the warm-up event published", async () => ((await pending()) === 0 ? true : undefined), 30_000);

    await kafka("stop");
    for (let n = 1; n <= 20; n++) await write(n);
    relay.notify();
    await eventually(
      "a failed publish attempt",
      async () => {
        const [row] = await db.query<{ attempts: number }>(`SELECT max(attempts) AS attempts FROM ${db.schema}.outbox`);
        return (row?.attempts ?? 0) > 0 ? true : undefined;
      },
      30_000,
    );
    expect(await pending()).toBe(20);

    await kafka("start");
    const seen: number[] = [];
    await bus.subscribe({
      groupId: `kit-it-${runId}-outage`,
      topics: [topic],
      fromBeginning: true,
      handler: async (m) => {
        seen.push((decodeEvent(m).data as { n: number }).n);
      },
    });
    await eventually("all 21 events consumed", () => (seen.length >= 21 ? true : undefined), 60_000);
    // A little longer, so a duplicate would have time to show up.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(seen).toEqual(Array.from({ length: 21 }, (_, n) => n));
    expect(await pending()).toBe(0);
  });
});
