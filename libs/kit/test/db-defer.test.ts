import { beforeEach, describe, expect, it } from "vitest";
import { combineWrites, type Db } from "../src/db.js";
import { freshKitDbEachTest } from "./helpers.js";

describe("combineWrites", () => {
  it("renumbers each write's parameters after those before it and runs all but the last as CTEs", () => {
    const combined = combineWrites([
      { sql: "INSERT INTO s.a (x, y) VALUES ($1, $2::jsonb)", params: [1, "{}"] },
      { sql: "UPDATE s.b SET v = $2 WHERE k = $1", params: ["k", 2] },
      { sql: "DELETE FROM s.c WHERE id = $1", params: ["c"] },
    ]);
    expect(combined.sql).toBe(
      "WITH deferred_0 AS (INSERT INTO s.a (x, y) VALUES ($1, $2::jsonb)), " +
        "deferred_1 AS (UPDATE s.b SET v = $4 WHERE k = $3) DELETE FROM s.c WHERE id = $5",
    );
    expect(combined.params).toEqual([1, "{}", "k", 2, "c"]);
  });
});

describe("Queryable.defer", () => {
  let db: Db;
  freshKitDbEachTest((fresh) => {
    db = fresh;
  });
  beforeEach(async () => {
    await db.exec(`CREATE TABLE ${db.schema}.a (id int PRIMARY KEY, v text);
      CREATE TABLE ${db.schema}.b (id int PRIMARY KEY, n int NOT NULL);
      INSERT INTO ${db.schema}.b VALUES (1, 0);`);
  });

  it("sends deferred writes before the transaction's next statement, which sees them", async () => {
    const seen = await db.tx(async (q) => {
      q.defer(`INSERT INTO ${db.schema}.a (id, v) VALUES ($1, $2)`, [1, "one"]);
      q.defer(`UPDATE ${db.schema}.b SET n = n + $2 WHERE id = $1`, [1, 5]);
      return q.query<{ v: string; n: number }>(`SELECT a.v, b.n FROM ${db.schema}.a, ${db.schema}.b`);
    });
    expect(seen).toEqual([{ v: "one", n: 5 }]);
  });

  it("sends what is still deferred before COMMIT, in the order written for writes to one table", async () => {
    await db.tx(async (q) => {
      q.defer(`INSERT INTO ${db.schema}.a (id, v) VALUES ($1, $2)`, [1, "first"]);
      q.defer(`UPDATE ${db.schema}.b SET n = $2 WHERE id = $1`, [1, 7]);
      // Same table again: it must see the first insert (a statement of its own), or this fails.
      q.defer(`UPDATE ${db.schema}.a SET v = v || $2 WHERE id = $1`, [1, "+second"]);
    });
    expect(await db.query(`SELECT v FROM ${db.schema}.a`)).toEqual([{ v: "first+second" }]);
    expect(await db.query(`SELECT n FROM ${db.schema}.b`)).toEqual([{ n: 7 }]);
  });

  it("rolls everything back when a deferred write fails, with the error its mapError chose", async () => {
    const mapped = new Error("mapped: duplicate");
    const failing = db.tx(async (q) => {
      await q.query(`UPDATE ${db.schema}.b SET n = 99 WHERE id = 1`);
      q.defer(`INSERT INTO ${db.schema}.a (id, v) VALUES ($1, $2)`, [1, "x"]);
      q.defer(`INSERT INTO ${db.schema}.b (id, n) VALUES ($1, $2)`, [1, 0], (err) =>
        (err as { code?: string }).code === "23505" ? mapped : undefined,
      );
    });
    await expect(failing).rejects.toBe(mapped);
    expect(await db.query(`SELECT count(*)::int AS c FROM ${db.schema}.a`)).toEqual([{ c: 0 }]);
    expect(await db.query(`SELECT n FROM ${db.schema}.b`)).toEqual([{ n: 0 }]);
  });

  it("runs a write it cannot combine (quoted text) as a statement of its own", async () => {
    await db.tx(async (q) => {
      q.defer(`INSERT INTO ${db.schema}.a (id, v) VALUES ($1, 'it''s $2')`, [1]);
      q.defer(`UPDATE ${db.schema}.b SET n = $2 WHERE id = $1`, [1, 3]);
    });
    expect(await db.query(`SELECT v FROM ${db.schema}.a`)).toEqual([{ v: "it's $2" }]);
    expect(await db.query(`SELECT n FROM ${db.schema}.b`)).toEqual([{ n: 3 }]);
  });

  it("is refused outside a transaction", () => {
    expect(() => db.defer(`INSERT INTO ${db.schema}.a (id, v) VALUES ($1, $2)`, [1, "x"])).toThrow(/transaction/);
  });
});

describe("Queryable.afterCommit", () => {
  let db: Db;
  freshKitDbEachTest((fresh) => {
    db = fresh;
  });
  beforeEach(async () => {
    await db.exec(`CREATE TABLE ${db.schema}.a (id int PRIMARY KEY, v text)`);
  });

  it("runs once the transaction committed, after what it wrote is visible", async () => {
    const seen: number[] = [];
    const visible = () => db.query<{ c: number }>(`SELECT count(*)::int AS c FROM ${db.schema}.a`);
    await db.tx(async (q) => {
      q.defer(`INSERT INTO ${db.schema}.a (id, v) VALUES ($1, $2)`, [1, "one"]);
      q.afterCommit?.(() => seen.push(1));
      expect(seen).toEqual([]);
    });
    expect(seen).toEqual([1]);
    expect(await visible()).toEqual([{ c: 1 }]);
    await db.writeOnly(async (q) => {
      q.defer(`INSERT INTO ${db.schema}.a (id, v) VALUES ($1, $2)`, [2, "two"]);
      q.afterCommit?.(() => seen.push(2));
    });
    expect(seen).toEqual([1, 2]);
  });

  it("never runs when the transaction rolls back or its one statement fails", async () => {
    const seen: string[] = [];
    await expect(
      db.tx(async (q) => {
        q.afterCommit?.(() => seen.push("tx"));
        throw new Error("no");
      }),
    ).rejects.toThrow("no");
    await expect(
      db.writeOnly(async (q) => {
        q.defer(`INSERT INTO ${db.schema}.a (id, v) VALUES ($1, $2)`, [1, null]);
        q.defer(`INSERT INTO ${db.schema}.missing (id) VALUES ($1)`, [1]);
        q.afterCommit?.(() => seen.push("writeOnly"));
      }),
    ).rejects.toThrow();
    expect(seen).toEqual([]);
  });
});
