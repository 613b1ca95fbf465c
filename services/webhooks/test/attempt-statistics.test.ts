import type { Db } from "@platform/kit/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attemptStatistics } from "../src/delivery/statistics.js";
import { openTestDb, silentLogger } from "./builders.js";

// A backlog fanned out into a table the planner has no statistics of is planned as if the
// table were empty; the delivery worker analyzes it as autovacuum would.
let db: Db;
let closeDb: () => Promise<void>;

beforeAll(async () => {
  const t = await openTestDb();
  db = t.db;
  closeDb = () => t.pglite.close();
  await db.query(
    `INSERT INTO webhooks.subscriptions (id, org_id, endpoint_url, events, enabled, payload_version, secret,
       created_at, updated_at, endpoint_origin)
     VALUES ('whsub_stats', 'org_stats', 'https://example.com/hook', ARRAY['revenue.deal.created'], true, 'v2',
       'whsec_c3RhdGlzdGljcy0wMTIzNDU2Nzg5YWJjZGVm', now(), now(), 'https://example.com')`,
  );
});
afterAll(() => closeDb());

/** Queues `n` pending attempts (and their events) as a fan-out would, without telling anyone. */
async function queue(from: number, n: number): Promise<void> {
  await db.query(
    `INSERT INTO webhooks.events (id, org_id, type, data, occurred_at)
     SELECT 'evt_stats' || g, 'org_stats', 'revenue.deal.created', '{}'::jsonb, now() FROM generate_series($1::int, $2::int) g`,
    [from, from + n - 1],
  );
  await db.query(
    `INSERT INTO webhooks.attempts (id, subscription_id, event_id, attempt, trigger, status, scheduled_at, retry_step, created_at)
     SELECT 'wd_stats' || g, 'whsub_stats', 'evt_stats' || g, 1, 'event', 'pending', now(), 1, now()
       FROM generate_series($1::int, $2::int) g`,
    [from, from + n - 1],
  );
}

const estimatedRows = async () =>
  Number(
    (
      await db.query<{ n: number }>(
        "SELECT reltuples::float8 AS n FROM pg_class WHERE oid = 'webhooks.attempts'::regclass",
      )
    )[0]?.n,
  );

describe("the attempts' statistics", () => {
  it("are refreshed once 1,000 attempts were queued, then at 10 % growth, never before", async () => {
    const statistics = attemptStatistics(db, silentLogger);
    const fresh = await estimatedRows();
    await queue(1, 999);
    statistics.queued(999);
    await statistics.idle();
    expect(await estimatedRows()).toBe(fresh);

    await queue(1000, 1);
    statistics.queued(1);
    await statistics.idle();
    expect(await estimatedRows()).toBe(1000);

    // The next one is due at 10 % of the table, but at least 1,000 attempts later.
    await queue(1001, 999);
    statistics.queued(999);
    await statistics.idle();
    expect(await estimatedRows()).toBe(1000);
    await queue(2000, 1);
    statistics.queued(1);
    await statistics.idle();
    expect(await estimatedRows()).toBe(2000);
  });
});
