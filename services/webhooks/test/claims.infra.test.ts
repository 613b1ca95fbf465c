import { randomBytes, randomUUID } from "node:crypto";
import { ManualClock } from "@platform/kit/clock";
import { type Db, openPg } from "@platform/kit/db";
import { newId } from "@platform/kit/ids";
import { kitMigrations, migrate } from "@platform/kit/migrate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpSender, systemResolver } from "../src/delivery/sender.js";
import { deliveryWorker } from "../src/delivery/worker.js";
import { newSecret } from "../src/domain/signature.js";
import { webhooksMigrations } from "../src/server.js";
import { txStore } from "../src/store/index.js";
import { silentLogger, startReceiver } from "./builders.js";

// Several delivery workers on one real Postgres: PGlite runs one transaction at a time, so
// only here do claims race, and FOR UPDATE SKIP LOCKED with leases must hand every due
// attempt to exactly one of them.
const ADMIN_URL = process.env.POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const database = `webhooks_claims_it_${randomBytes(4).toString("hex")}`;
const clock = new ManualClock("2026-01-15T12:00:00Z");
const ATTEMPTS = 60;

let admin: Db;
let db: Db;
let receivers: Awaited<ReturnType<typeof startReceiver>>[] = [];

beforeAll(async () => {
  admin = openPg({ url: ADMIN_URL, schema: "public", max: 1 });
  await admin.exec(`CREATE DATABASE ${database}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  db = openPg({ url: url.toString(), schema: "webhooks", max: 12 });
  await migrate(db, [kitMigrations, webhooksMigrations]);
  // Several endpoints, so the per-endpoint cap does not serialise the whole run.
  receivers = await Promise.all(Array.from({ length: 6 }, () => startReceiver()));
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await db?.close();
  await admin?.exec(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin?.close();
});

describe("concurrent delivery workers", () => {
  it("send every due attempt exactly once between them", async () => {
    const now = clock.now();
    const store = txStore(db);
    const subscriptions = receivers.map(() => newId("sub_"));
    for (const [i, id] of subscriptions.entries()) {
      await store.insertSubscription({
        id,
        orgId: newId("org_"),
        endpointUrl: receivers[i]?.url ?? "",
        events: ["scheduling.smartscheduler.booked"],
        description: null,
        enabled: true,
        payloadVersion: "v2",
        secret: newSecret(),
        previousSecret: null,
        previousSecretExpiresAt: null,
        disabledReason: null,
        disabledAt: null,
        failingSince: null,
        lastFailureAt: null,
        createdAt: now,
        updatedAt: now,
      });
    }
    for (let i = 0; i < ATTEMPTS; i++) {
      const eventId = randomUUID();
      const subscriptionId = subscriptions[i % subscriptions.length] as string;
      await store.insertEvent({
        id: eventId,
        orgId: "org_x",
        type: "revenue.deal.created",
        data: { i },
        occurredAt: now,
      });
      await store.insertAttempt({
        id: newId("wd_"),
        subscriptionId,
        eventId,
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
    }
    const workers = Array.from({ length: 4 }, () =>
      deliveryWorker({
        db,
        clock,
        logger: silentLogger,
        sender: httpSender({ allowPrivateTargets: true, resolve: systemResolver, timeoutMs: 5000 }),
        leaseMs: 30_000,
        concurrency: 8,
        perEndpoint: 2,
        pollMs: 10,
      }),
    );
    let sent = 0;
    for (let round = 0; round < 100 && sent < ATTEMPTS; round++) {
      const counts = await Promise.all(workers.map((w) => w.runOnce()));
      sent += counts.reduce((a, b) => a + b, 0);
    }
    expect(sent).toBe(ATTEMPTS);
    const ids = receivers.flatMap((r) => r.received.map((x) => x.headers["webhook-id"]));
    expect(ids).toHaveLength(ATTEMPTS);
    expect(new Set(ids).size).toBe(ATTEMPTS);
    const [row] = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM webhooks.attempts WHERE status = 'succeeded'",
    );
    expect(row?.n).toBe(ATTEMPTS);
  });
});
