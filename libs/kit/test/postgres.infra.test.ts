import { Code, createClient } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus } from "@platform/contracts/health";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BusMessage, EventBus } from "../src/bus.js";
import { ManualClock } from "../src/clock.js";
import { errorInterceptor, httpTransport, serveConnect } from "../src/connect.js";
import { type Db, openPg, PLANNED_EACH_TIME } from "../src/db.js";
import { hashRequest, runIdempotent, runIdempotentStatement } from "../src/idempotency.js";
import { InProcessBus } from "../src/in-process-bus.js";
import { kitMigrations, migrate } from "../src/migrate.js";
import { type OutboxRelay, startOutboxRelay } from "../src/outbox-relay.js";
import { ProblemError } from "../src/problems.js";
import { eventually, silentLogger, throwawayDatabase, within } from "./helpers.js";

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
  it("prepares a repeated statement once per connection, but not a batch whose text varies nor one planned each time", async () => {
    const db = open("prepared", 1);
    await db.exec("CREATE SCHEMA IF NOT EXISTS prepared");
    const prepared = () =>
      db.tx((q) => q.query<{ statement: string }>("SELECT statement FROM pg_prepared_statements ORDER BY name"));
    for (let i = 0; i < 3; i++) expect(await db.query("SELECT $1::int + 1 AS n", [i])).toEqual([{ n: i + 1 }]);
    const many = Array.from({ length: 40 }, (_, i) => i);
    const placeholders = many.map((i) => `$${i + 1}::int`).join(" + ");
    expect(await db.query(`SELECT ${placeholders} AS n`, many)).toEqual([{ n: 780 }]);
    for (let i = 0; i < 3; i++)
      expect(await db.query(`${PLANNED_EACH_TIME}SELECT cardinality($1::int[]) AS n`, [[i]])).toEqual([{ n: 1 }]);
    const statements = (await prepared()).map((r) => r.statement);
    // The repeated one once; the 40-parameter one and the one planned each time not at all; the
    // look-up itself once.
    expect(statements.filter((s) => s === "SELECT $1::int + 1 AS n")).toHaveLength(1);
    expect(statements.some((s) => s.includes("$40"))).toBe(false);
    expect(statements.some((s) => s.includes("cardinality"))).toBe(false);
    expect(statements).toHaveLength(2);
  });

  it("sends a transaction's deferred writes as one prepared statement before its COMMIT", async () => {
    const db = open("deferred", 1);
    await db.exec(`CREATE SCHEMA IF NOT EXISTS deferred;
      CREATE TABLE deferred.events (seq int GENERATED ALWAYS AS IDENTITY, name text NOT NULL, data jsonb);
      CREATE TABLE deferred.keys (key text PRIMARY KEY, response jsonb)`);
    for (const n of [1, 2]) {
      await db.tx(async (q) => {
        await q.query("INSERT INTO deferred.keys (key) VALUES ($1)", [`k${n}`]);
        q.defer("INSERT INTO deferred.events (name, data) VALUES ($1, $2::jsonb)", [`e${n}`, JSON.stringify({ n })]);
        q.defer("UPDATE deferred.keys SET response = $2::jsonb WHERE key = $1", [`k${n}`, JSON.stringify({ ok: n })]);
      });
    }
    expect(await db.query("SELECT name, data FROM deferred.events ORDER BY seq")).toEqual([
      { name: "e1", data: { n: 1 } },
      { name: "e2", data: { n: 2 } },
    ]);
    expect(await db.query("SELECT key, response FROM deferred.keys ORDER BY key")).toEqual([
      { key: "k1", response: { ok: 1 } },
      { key: "k2", response: { ok: 2 } },
    ]);
    const statements = await db.tx((q) =>
      q.query<{ statement: string }>(
        "SELECT statement FROM pg_prepared_statements WHERE statement LIKE 'WITH deferred_0%'",
      ),
    );
    expect(statements).toHaveLength(1);
  });

  it("commits a statement on its lazy side without waiting for the disk, and nothing else", async () => {
    const db = open("lazy", 1);
    const setting = (q: { query: Db["query"] }) =>
      q.query<{ synchronous_commit: string }>("SHOW synchronous_commit").then((r) => r[0]?.synchronous_commit);
    expect(await setting(db.lazy)).toBe("off");
    expect(await setting(db)).toBe("on");
    expect(await db.tx((q) => setting(q))).toBe("on");
    await db.exec("CREATE SCHEMA IF NOT EXISTS lazy; CREATE TABLE lazy.leases (id int PRIMARY KEY, until int)");
    await db.lazy.query("INSERT INTO lazy.leases VALUES ($1, $2)", [1, 10]);
    // Committed on its own: visible to every other connection at once.
    expect(await db.query("SELECT until FROM lazy.leases WHERE id = 1")).toEqual([{ until: 10 }]);
  });

  it("an outbox relay that finds another replica's relay publishing tries again soon, and publishes what it left", async () => {
    const [dbA, dbB] = [open("relays", 2), open("relays", 2)] as [Db, Db];
    await migrate(dbA, [kitMigrations]);
    // Replica A's broker answers only when the test lets it: its relay holds the lock meanwhile.
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let publishing = () => {};
    const publishingA = new Promise<void>((resolve) => {
      publishing = resolve;
    });
    const busA: EventBus = {
      publish: async () => {
        publishing();
        await released;
      },
      subscribe: () => Promise.reject(new Error("not used")),
      close: async () => {},
    };
    const busB = new InProcessBus();
    const seenByB: string[] = [];
    await busB.subscribe({
      groupId: "b",
      topics: ["a"],
      handler: async (m: BusMessage) => {
        seenByB.push(m.headers.ce_id ?? "");
      },
    });
    // Polls far apart: only the commit's wake and the retry after a busy lock can publish.
    const slow = { logger: silentLogger, intervalMs: 60_000, idleIntervalMs: 60_000 };
    const relays: OutboxRelay[] = [];
    // Rows written as another process writes them: nothing in this process is woken by them, so
    // each relay here goes only by its first round, its polls and its retries.
    const insertRow = async () =>
      (
        await dbB.query<{ id: string }>(
          `INSERT INTO relays.outbox (id, topic, key, type, source, time, data)
           VALUES (gen_random_uuid(), 'a', 'k', 'x', 'test', now(), '{}') RETURNING id`,
        )
      )[0]?.id;
    try {
      await insertRow();
      relays.push(startOutboxRelay({ db: dbA, bus: busA, ...slow }));
      await within("replica A's publish", publishingA);
      // Replica B starts while A holds the lock, and a row is committed that A's claim did not see.
      relays.push(startOutboxRelay({ db: dbB, bus: busB, ...slow }));
      const row = await insertRow();
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(seenByB).toEqual([]);
      release();
      await eventually(
        "B publishes the row once A's round is over",
        () => (seenByB.length === 1 ? true : undefined),
        5_000,
      );
      expect(seenByB).toEqual([row]);
    } finally {
      release();
      await Promise.all(relays.map((r) => r.stop()));
    }
  });

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

  it("claims a key in the one statement of a write-only write: duplicates wait for the holder, then replay", async () => {
    const db = open("idem_one");
    await migrate(db, [kitMigrations]);
    await db.exec("CREATE TABLE idem_one.things (name text PRIMARY KEY)");
    const clock = new ManualClock();
    const scopeOf = (key: string) => ({ tokenId: "tok_a", key, requestHash: hashRequest({ key }) });
    const insert = (name: string) => async (q: { defer: Db["defer"] }) => {
      q.defer("INSERT INTO idem_one.things (name) VALUES ($1)", [name]);
      return { status: 201, body: { name } };
    };
    // A transaction of runIdempotent's kind holds the key uncommitted for 0.3 s; the
    // one-statement duplicates block in their claim until it commits, then replay it.
    const holder = runIdempotent(db, scopeOf("k1"), clock, async (q) => {
      const answer = await insert("first")(q);
      await q.query("SELECT pg_sleep(0.3)");
      return answer;
    });
    await new Promise((r) => setTimeout(r, 50));
    const duplicates = await Promise.all(
      Array.from({ length: 8 }, (_, i) => runIdempotentStatement(db, scopeOf("k1"), clock, insert(`dup${i}`))),
    );
    expect((await holder).replayed).toBe(false);
    expect(duplicates.every((r) => r.replayed && JSON.stringify(r.body) === '{"name":"first"}')).toBe(true);

    // When the holder rolls back, exactly one waiting duplicate claims the key.
    const failing = runIdempotent(db, scopeOf("k2"), clock, async (q) => {
      await insert("never")(q);
      await q.query("SELECT pg_sleep(0.3)");
      throw new Error("rolled back");
    }).catch((e: Error) => e.message);
    await new Promise((r) => setTimeout(r, 50));
    const racers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => runIdempotentStatement(db, scopeOf("k2"), clock, insert(`k2-${i}`))),
    );
    expect(await failing).toBe("rolled back");
    expect(racers.filter((r) => !r.replayed)).toHaveLength(1);
    const names = await db.query<{ name: string }>("SELECT name FROM idem_one.things ORDER BY name");
    expect(names.map((r) => r.name).filter((n) => n.startsWith("k2-") || n === "never")).toHaveLength(1);
    expect(names.some((r) => r.name.startsWith("dup"))).toBe(false);

    // The key's record and the write go out as one prepared statement (no BEGIN, no COMMIT of its own).
    const single = open("idem_one", 1);
    await runIdempotentStatement(single, scopeOf("k3"), clock, insert("third"));
    const statements = await single.tx((q) =>
      q.query<{ statement: string }>(
        "SELECT statement FROM pg_prepared_statements WHERE statement LIKE 'WITH deferred_0%idempotency_keys%'",
      ),
    );
    expect(statements.length).toBeGreaterThan(0);
  });

  it("cuts a query still running at the deadline of the RPC it serves (statement_timeout of what remains)", async () => {
    const db = open("deadline", 2);
    let seen: { code?: unknown; ms: number } | undefined;
    const server = await serveConnect({
      routes: (router) =>
        router.service(Health, {
          async check() {
            const started = Date.now();
            try {
              await db.tx((q) => q.query("SELECT pg_sleep(5)"));
            } catch (err) {
              seen = { code: (err as { code?: unknown }).code, ms: Date.now() - started };
              throw err;
            }
            return { status: HealthCheckResponse_ServingStatus.SERVING };
          },
        }),
      interceptors: [errorInterceptor(silentLogger)],
      port: 0,
      host: "127.0.0.1",
    });
    try {
      const client = createClient(Health, httpTransport(`http://127.0.0.1:${server.port}`, [], { timeoutMs: 500 }));
      await expect(client.check({})).rejects.toMatchObject({ code: Code.DeadlineExceeded });
      await eventually("the handler's query to end", () => seen, 5000);
      // query_canceled by the transaction's statement_timeout, about when the caller gave up.
      expect(seen?.code).toBe("57014");
      expect(seen?.ms).toBeLessThan(2000);
      // The connection went back to the pool usable, without the call's timeout.
      expect(await db.tx((q) => q.query("SELECT current_setting('statement_timeout') AS t"))).toEqual([{ t: "0" }]);
    } finally {
      await server.close();
    }
  });
});
