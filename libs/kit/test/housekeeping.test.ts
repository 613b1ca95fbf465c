import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../src/clock.js";
import { purgeExpired } from "../src/housekeeping.js";
import { kitPglite } from "./helpers.js";

describe("purgeExpired", () => {
  let pglite: Awaited<ReturnType<typeof kitPglite>>;
  beforeAll(async () => {
    pglite = await kitPglite();
  });
  afterAll(async () => {
    await pglite.close();
  });

  it("deletes only expired outbox rows, handled-event records and idempotency keys", async () => {
    const db = await pglite.fresh();
    const s = db.schema;
    const clock = new ManualClock(new Date("2026-03-10T12:00:00Z"));
    const outbox = (id: string, published: string | null) =>
      db.query(
        `INSERT INTO ${s}.outbox (id, topic, key, type, source, time, data, published_at)
         VALUES ($1, 't', 'k', 'x', 'test', now(), '{}', ${published === null ? "NULL" : `now() - interval '${published}'`})`,
        [id],
      );
    await outbox("00000000-0000-4000-8000-000000000001", "8 days");
    await outbox("00000000-0000-4000-8000-000000000002", "6 days");
    await outbox("00000000-0000-4000-8000-000000000003", null);
    await db.query(
      `INSERT INTO ${s}.processed_events (consumer, event_id, processed_at)
       VALUES ('c', 'old', now() - interval '31 days'), ('c', 'recent', now() - interval '29 days')`,
    );
    const key = (k: string, at: string) =>
      db.query(
        `INSERT INTO ${s}.idempotency_keys (token_id, key, request_hash, status_code, response, created_at)
         VALUES ('tok_1', $1, 'h', 201, '{}', $2)`,
        [k, at],
      );
    await key("expired", "2026-03-09T11:59:00Z");
    await key("live", "2026-03-09T12:01:00Z");

    expect(await purgeExpired(db, clock)).toEqual({ outbox: 1, processedEvents: 1, idempotencyKeys: 1 });
    const left = async (sql: string) => (await db.query<{ v: string }>(sql)).map((r) => r.v).sort();
    expect(await left(`SELECT id::text AS v FROM ${s}.outbox`)).toEqual([
      "00000000-0000-4000-8000-000000000002",
      "00000000-0000-4000-8000-000000000003",
    ]);
    expect(await left(`SELECT event_id AS v FROM ${s}.processed_events`)).toEqual(["recent"]);
    expect(await left(`SELECT key AS v FROM ${s}.idempotency_keys`)).toEqual(["live"]);
    expect(await purgeExpired(db, clock)).toEqual({ outbox: 0, processedEvents: 0, idempotencyKeys: 0 });
  });
});
