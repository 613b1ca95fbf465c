import { beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../src/clock.js";
import type { Db } from "../src/db.js";
import { hashRequest, purgeIdempotencyKeys, runIdempotent, runIdempotentStatement } from "../src/idempotency.js";
import { ProblemError, problem } from "../src/problems.js";
import { freshKitDbEachTest } from "./helpers.js";

describe("hashRequest", () => {
  it("ignores key order at every level but not array order or values", () => {
    expect(hashRequest({ a: 1, b: { c: [1, 2], d: "x" } })).toBe(hashRequest({ b: { d: "x", c: [1, 2] }, a: 1 }));
    expect(hashRequest({ a: [1, 2] })).not.toBe(hashRequest({ a: [2, 1] }));
    expect(hashRequest({ a: 1 })).not.toBe(hashRequest({ a: "1" }));
    expect(hashRequest(undefined)).toBe(hashRequest(null));
    expect(hashRequest({})).toMatch(/^[0-9a-f]{64}$/);
  });
});

// One embedded Postgres for the file; every test gets a fresh schema and clock.
let db: Db;
let clock: ManualClock;
freshKitDbEachTest((fresh) => {
  db = fresh;
});
beforeEach(() => {
  clock = new ManualClock();
});

describe("runIdempotent", () => {
  beforeEach(async () => {
    await db.exec(`CREATE TABLE ${db.schema}.things (id serial PRIMARY KEY, name text NOT NULL)`);
  });

  const scope = (body: unknown, key = "key-1", actingOrgId?: string) => ({
    tokenId: "tok_1",
    key,
    requestHash: hashRequest(body),
    ...(actingOrgId ? { actingOrgId } : {}),
  });
  const createThing = (name: string) => async (q: Parameters<Parameters<typeof runIdempotent>[3]>[0]) => {
    const [row] = await q.query<{ id: number }>(`INSERT INTO ${db.schema}.things (name) VALUES ($1) RETURNING id`, [
      name,
    ]);
    return { status: 201, body: { id: row?.id, name } };
  };
  const count = async () => (await db.query<{ c: number }>(`SELECT count(*)::int AS c FROM ${db.schema}.things`))[0]?.c;

  it("runs once and replays the stored response for the same key and body", async () => {
    const first = await runIdempotent(db, scope({ name: "a" }), clock, createThing("a"));
    expect(first).toEqual({ status: 201, body: { id: 1, name: "a" }, replayed: false });
    const again = await runIdempotent(db, scope({ name: "a" }), clock, createThing("a"));
    expect(again).toEqual({ status: 201, body: { id: 1, name: "a" }, replayed: true });
    expect(await count()).toBe(1);
  });

  it("rejects the same key with a different body as idempotency-key-conflict", async () => {
    await runIdempotent(db, scope({ name: "a" }), clock, createThing("a"));
    const err = await runIdempotent(db, scope({ name: "b" }), clock, createThing("b")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProblemError);
    expect((err as ProblemError).problemName).toBe("idempotency-key-conflict");
    expect((err as ProblemError).status).toBe(422);
    expect(await count()).toBe(1);
  });

  it("scopes keys per token and acting-on org", async () => {
    await runIdempotent(db, scope({ name: "a" }), clock, createThing("a"));
    const child = await runIdempotent(db, scope({ name: "a" }, "key-1", "org_child"), clock, createThing("a"));
    const otherToken = await runIdempotent(db, { ...scope({ name: "a" }), tokenId: "tok_2" }, clock, createThing("a"));
    expect(child.replayed).toBe(false);
    expect(otherToken.replayed).toBe(false);
    expect(await count()).toBe(3);
  });

  it("rolls everything back when the work throws a problem, leaving the key free", async () => {
    const failing = async (q: Parameters<Parameters<typeof runIdempotent>[3]>[0]) => {
      await createThing("a")(q);
      throw problem("slot-conflict");
    };
    await expect(runIdempotent(db, scope({ name: "a" }), clock, failing)).rejects.toMatchObject({
      problemName: "slot-conflict",
    });
    expect(await count()).toBe(0);
    expect(await db.query(`SELECT 1 FROM ${db.schema}.idempotency_keys`)).toHaveLength(0);
    const retried = await runIdempotent(db, scope({ name: "a" }), clock, createThing("a"));
    expect(retried.replayed).toBe(false);
    expect(await count()).toBe(1);
  });

  it("treats a record older than 24 hours as absent", async () => {
    await runIdempotent(db, scope({ name: "a" }), clock, createThing("a"));
    clock.advance(24 * 60 * 60 * 1000 - 1);
    expect(
      (await runIdempotent(db, scope({ name: "b" }), clock, createThing("b")).catch((e: unknown) => e)) instanceof
        ProblemError,
    ).toBe(true);
    expect((await runIdempotent(db, scope({ name: "a" }), clock, createThing("a"))).replayed).toBe(true);
    clock.advance(1);
    const fresh = await runIdempotent(db, scope({ name: "b" }), clock, createThing("b"));
    expect(fresh).toMatchObject({ status: 201, replayed: false, body: { name: "b" } });
    expect((await runIdempotent(db, scope({ name: "b" }), clock, createThing("b"))).replayed).toBe(true);
    expect(await count()).toBe(2);
  });

  it("executes concurrent duplicates once", async () => {
    const results = await Promise.all(
      Array.from({ length: 5 }, () => runIdempotent(db, scope({ name: "a" }), clock, createThing("a"))),
    );
    expect(await count()).toBe(1);
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    expect(new Set(results.map((r) => JSON.stringify(r.body))).size).toBe(1);
  });

  it("purges records past the retention window", async () => {
    await runIdempotent(db, scope({ name: "a" }, "old"), clock, createThing("a"));
    clock.advance(23 * 60 * 60 * 1000);
    await runIdempotent(db, scope({ name: "b" }, "recent"), clock, createThing("b"));
    clock.advance(60 * 60 * 1000);
    expect(await purgeIdempotencyKeys(db, clock)).toBe(1);
    const keys = await db.query<{ key: string }>(`SELECT key FROM ${db.schema}.idempotency_keys`);
    expect(keys.map((k) => k.key)).toEqual(["recent"]);
  });
});

describe("runIdempotentStatement", () => {
  beforeEach(async () => {
    await db.exec(`CREATE TABLE ${db.schema}.things (name text PRIMARY KEY, note text)`);
  });

  const scope = (body: unknown, key = "key-1") => ({ tokenId: "tok_1", key, requestHash: hashRequest(body) });
  type Q = Parameters<Parameters<typeof runIdempotentStatement>[3]>[0];
  const createThing = (name: string) => async (q: Q) => {
    q.defer(`INSERT INTO ${db.schema}.things (name) VALUES ($1)`, [name]);
    return { status: 201, body: { name } };
  };
  const names = async () =>
    (await db.query<{ name: string }>(`SELECT name FROM ${db.schema}.things ORDER BY name`)).map((r) => r.name);
  const keys = () => db.query(`SELECT key, status_code, response FROM ${db.schema}.idempotency_keys`);

  it("runs once, stores the response with the key, and replays it for the same key and body", async () => {
    expect(await runIdempotentStatement(db, scope({ name: "a" }), clock, createThing("a"))).toEqual({
      status: 201,
      body: { name: "a" },
      replayed: false,
    });
    expect(await keys()).toEqual([{ key: "key-1", status_code: 201, response: { name: "a" } }]);
    const again = await runIdempotentStatement(db, scope({ name: "a" }), clock, createThing("a"));
    expect(again).toEqual({ status: 201, body: { name: "a" }, replayed: true });
    expect(await names()).toEqual(["a"]);
  });

  it("answers a key reused with another body 422 idempotency-key-conflict and writes nothing", async () => {
    await runIdempotentStatement(db, scope({ name: "a" }), clock, createThing("a"));
    const err = await runIdempotentStatement(db, scope({ name: "b" }), clock, createThing("b")).catch((e) => e);
    expect(err).toBeInstanceOf(ProblemError);
    expect((err as ProblemError).problemName).toBe("idempotency-key-conflict");
    expect(await names()).toEqual(["a"]);
  });

  it("replays a key that runIdempotent recorded, and the other way round", async () => {
    await runIdempotent(db, scope({ name: "a" }), clock, createThing("a"));
    expect((await runIdempotentStatement(db, scope({ name: "a" }), clock, createThing("a"))).replayed).toBe(true);
    await runIdempotentStatement(db, scope({ name: "b" }, "key-2"), clock, createThing("b"));
    expect((await runIdempotent(db, scope({ name: "b" }, "key-2"), clock, createThing("b"))).replayed).toBe(true);
    expect(await names()).toEqual(["a", "b"]);
  });

  it("leaves nothing written and the key free when a write of the statement fails", async () => {
    await db.query(`INSERT INTO ${db.schema}.things (name) VALUES ('taken')`);
    const both = async (q: Q) => {
      q.defer(`INSERT INTO ${db.schema}.things (name) VALUES ($1)`, ["new"]);
      q.defer(`INSERT INTO ${db.schema}.things (name) VALUES ($1)`, ["taken"]);
      return { status: 201, body: {} };
    };
    await expect(runIdempotentStatement(db, scope({ n: 1 }), clock, both)).rejects.toMatchObject({ code: "23505" });
    expect(await names()).toEqual(["taken"]);
    expect(await keys()).toEqual([]);
    // A problem thrown before anything is sent: nothing is sent.
    const refused = async () => {
      throw problem("slot-conflict");
    };
    await expect(runIdempotentStatement(db, scope({ n: 1 }), clock, refused)).rejects.toMatchObject({
      problemName: "slot-conflict",
    });
    expect(await keys()).toEqual([]);
    expect((await runIdempotentStatement(db, scope({ n: 1 }), clock, createThing("b"))).replayed).toBe(false);
  });

  it("refuses to read: its writes are all it sends", async () => {
    const reading = async (q: Q) => {
      await q.query("SELECT 1");
      return { status: 200, body: {} };
    };
    await expect(runIdempotentStatement(db, scope({}), clock, reading)).rejects.toThrow(/cannot read/);
    expect(await keys()).toEqual([]);
  });

  it("treats a record older than 24 hours as absent, and replaces it", async () => {
    await runIdempotentStatement(db, scope({ name: "a" }), clock, createThing("a"));
    clock.advance(24 * 60 * 60 * 1000 - 1);
    const err = await runIdempotentStatement(db, scope({ name: "b" }), clock, createThing("b")).catch((e) => e);
    expect((err as ProblemError).problemName).toBe("idempotency-key-conflict");
    clock.advance(1);
    const fresh = await runIdempotentStatement(db, scope({ name: "b" }), clock, createThing("b"));
    expect(fresh).toMatchObject({ status: 201, replayed: false, body: { name: "b" } });
    expect((await runIdempotentStatement(db, scope({ name: "b" }), clock, createThing("b"))).replayed).toBe(true);
    expect(await names()).toEqual(["a", "b"]);
  });

  it("executes concurrent duplicates once", async () => {
    const results = await Promise.all(
      Array.from({ length: 5 }, () => runIdempotentStatement(db, scope({ name: "a" }), clock, createThing("a"))),
    );
    expect(await names()).toEqual(["a"]);
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
  });

  it("keeps writes that cannot share a statement in one transaction", async () => {
    // Quoted text cannot ride in a combined statement: two statements, one transaction.
    const quoted = async (q: Q) => {
      q.defer(`INSERT INTO ${db.schema}.things (name, note) VALUES ($1, 'it''s')`, ["q"]);
      q.defer(`INSERT INTO ${db.schema}.things (name) VALUES ($1)`, ["q"]);
      return { status: 201, body: {} };
    };
    await expect(runIdempotentStatement(db, scope({ q: 1 }), clock, quoted)).rejects.toMatchObject({ code: "23505" });
    expect(await names()).toEqual([]);
    expect(await keys()).toEqual([]);
  });
});
