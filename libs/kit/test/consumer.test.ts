import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consumeOnce } from "../src/consumer.js";
import type { Db } from "../src/db.js";
import { kitPglite } from "./helpers.js";

describe("consumeOnce", () => {
  let pglite: Awaited<ReturnType<typeof kitPglite>>;
  let db: Db;
  beforeAll(async () => {
    pglite = await kitPglite();
    db = await pglite.fresh();
    await db.exec(`CREATE TABLE ${db.schema}.applied (event_id text, consumer text)`);
  });
  afterAll(async () => {
    await pglite.close();
  });

  const apply = (consumer: string, eventId: string) =>
    consumeOnce(db, consumer, eventId, async (q) => {
      await q.query(`INSERT INTO ${db.schema}.applied VALUES ($1, $2)`, [eventId, consumer]);
    });
  const applied = (eventId: string) =>
    db.query<{ consumer: string }>(`SELECT consumer FROM ${db.schema}.applied WHERE event_id = $1 ORDER BY consumer`, [
      eventId,
    ]);

  it("handles an event once per consumer and skips redeliveries", async () => {
    expect(await apply("webhooks", "ev-1")).toBe(true);
    expect(await apply("webhooks", "ev-1")).toBe(false);
    expect(await apply("projections", "ev-1")).toBe(true);
    expect((await applied("ev-1")).map((r) => r.consumer)).toEqual(["projections", "webhooks"]);
  });

  it("leaves no record when the handler fails, so a redelivery runs it again", async () => {
    await expect(
      consumeOnce(db, "webhooks", "ev-2", async (q) => {
        await q.query(`INSERT INTO ${db.schema}.applied VALUES ('ev-2', 'webhooks')`);
        throw new Error("downstream failed");
      }),
    ).rejects.toThrow("downstream failed");
    expect(await applied("ev-2")).toEqual([]);
    expect(await apply("webhooks", "ev-2")).toBe(true);
    expect(await applied("ev-2")).toHaveLength(1);
  });

  it("runs concurrent duplicates once", async () => {
    const results = await Promise.all([
      apply("webhooks", "ev-3"),
      apply("webhooks", "ev-3"),
      apply("webhooks", "ev-3"),
    ]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await applied("ev-3")).toHaveLength(1);
  });
});
