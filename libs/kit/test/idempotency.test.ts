import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../src/clock.js";
import type { Db } from "../src/db.js";
import { hashRequest, purgeIdempotencyKeys, runIdempotent } from "../src/idempotency.js";
import { ProblemError, problem } from "../src/problems.js";
import { kitPglite } from "./helpers.js";

describe("hashRequest", () => {
  it("ignores key order at every level but not array order or values", () => {
    expect(hashRequest({ a: 1, b: { c: [1, 2], d: "x" } })).toBe(hashRequest({ b: { d: "x", c: [1, 2] }, a: 1 }));
    expect(hashRequest({ a: [1, 2] })).not.toBe(hashRequest({ a: [2, 1] }));
    expect(hashRequest({ a: 1 })).not.toBe(hashRequest({ a: "1" }));
    expect(hashRequest(undefined)).toBe(hashRequest(null));
    expect(hashRequest({})).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("runIdempotent", () => {
  let pglite: Awaited<ReturnType<typeof kitPglite>>;
  let db: Db;
  let clock: ManualClock;
  beforeAll(async () => {
    pglite = await kitPglite();
  });
  afterAll(async () => {
    await pglite.close();
  });
  beforeEach(async () => {
    db = await pglite.fresh();
    await db.exec(`CREATE TABLE ${db.schema}.things (id serial PRIMARY KEY, name text NOT NULL)`);
    clock = new ManualClock();
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
