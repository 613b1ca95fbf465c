import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../src/clock.js";
import { type Db, openPg } from "../src/db.js";
import { hashRequest, runIdempotent } from "../src/idempotency.js";
import { kitMigrations, migrate } from "../src/migrate.js";
import { ProblemError } from "../src/problems.js";
import { throwawayDatabase } from "./helpers.js";

// Concurrency where only a real Postgres shows it: PGlite serialises every transaction.
let database: Awaited<ReturnType<typeof throwawayDatabase>>;
const dbs: Db[] = [];
const open = (schema: string, max = 12) => {
  const db = openPg({ url: database.url, schema, max });
  dbs.push(db);
  return db;
};

beforeAll(async () => {
  database = await throwawayDatabase("kit_pg_it");
});
afterAll(async () => {
  await Promise.all(dbs.map((db) => db.close()));
  await database.drop();
});

describe("on a real Postgres", () => {
  it("applies migrations once when several replicas start together", async () => {
    const replicas = Array.from({ length: 4 }, () => open("racing", 2));
    const applied = await Promise.all(replicas.map((db) => migrate(db, [kitMigrations])));
    // Every kit file applied by exactly one replica, and recorded once.
    const files = applied.flat();
    expect(files).toContain("kit/001_kit.sql");
    expect(new Set(files).size).toBe(files.length);
    const rows = await replicas[0]!.query("SELECT count(*)::int AS n FROM racing.schema_migrations");
    expect(rows).toEqual([{ n: files.length }]);
  });

  it("executes concurrent duplicates of one idempotent write exactly once", async () => {
    const db = open("idem");
    await migrate(db, [kitMigrations]);
    await db.exec("CREATE TABLE idem.things (id serial PRIMARY KEY, name text NOT NULL)");
    const clock = new ManualClock();
    const body = { name: "widget" };
    const scope = { tokenId: "tok_a", key: "create-widget", requestHash: hashRequest(body) };
    const write = () =>
      runIdempotent(db, scope, clock, async (q) => {
        const [row] = await q.query<{ id: number }>("INSERT INTO idem.things (name) VALUES ($1) RETURNING id", [
          body.name,
        ]);
        // Hold the transaction open so the duplicates really overlap it.
        await q.query("SELECT pg_sleep(0.2)");
        return { status: 201, body: { id: row!.id } };
      });
    const results = await Promise.all(Array.from({ length: 10 }, write));
    expect(await db.query("SELECT count(*)::int AS n FROM idem.things")).toEqual([{ n: 1 }]);
    expect(new Set(results.map((r) => JSON.stringify(r.body))).size).toBe(1);
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    expect(results.every((r) => r.status === 201)).toBe(true);

    const conflict = await runIdempotent(
      db,
      { ...scope, requestHash: hashRequest({ name: "other" }) },
      clock,
      async () => ({
        status: 201,
        body: {},
      }),
    ).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(ProblemError);
    expect((conflict as ProblemError).problemName).toBe("idempotency-key-conflict");
  });
});
