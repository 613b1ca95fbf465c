import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Db, isDatabaseUnavailable } from "../src/db.js";
import { checkDeadline } from "../src/deadline.js";
import { quietLog } from "../src/quiet-log.js";
import { capturingLogger } from "../test-support/testing.js";
import { kitPglite } from "./helpers.js";

describe("quietLog", () => {
  it("logs the first failure, then one line per interval with the count, then the recovery", () => {
    const lines: Record<string, unknown>[] = [];
    let now = 0;
    const quiet = quietLog(capturingLogger("quiet", "info", lines), { intervalMs: 60_000, now: () => now });
    const err = new Error("ECONNREFUSED");
    // 45 attempts a minute, as a kafkajs consumer retries against a broker that is down.
    for (let i = 0; i < 90; i++) {
      quiet.failure("kafka", err, "broker unreachable");
      now += 1_334;
    }
    expect(lines.map((l) => l.msg)).toEqual([
      "broker unreachable",
      expect.stringMatching(/^broker unreachable \(45 times in the last 6\d s\)$/),
    ]);
    expect(lines[1]).toMatchObject({ failure: "kafka", repeated: 45, failures: 46 });
    quiet.recovered("kafka", "broker reachable again");
    quiet.recovered("kafka", "broker reachable again");
    expect(lines.slice(2)).toEqual([expect.objectContaining({ msg: "broker reachable again", failures: 90 })]);
    // A new outage is reported at once again.
    quiet.failure("kafka", err, "broker unreachable");
    expect(lines).toHaveLength(4);
  });

  it("counts kinds of failure apart", () => {
    const lines: Record<string, unknown>[] = [];
    const quiet = quietLog(capturingLogger("quiet", "info", lines), { now: () => 0 });
    quiet.failure("db", new Error("x"), "db down");
    quiet.failure("kafka", new Error("y"), "kafka down");
    quiet.failure("db", new Error("x"), "db down");
    expect(lines.map((l) => l.msg)).toEqual(["db down", "kafka down"]);
  });
});

describe("isDatabaseUnavailable", () => {
  it("tells a lost or refused connection from a failing statement", () => {
    const yes = [
      new Error("Connection terminated unexpectedly"),
      Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }),
      Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }),
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }),
      Object.assign(new Error("connection failure"), { code: "08006" }),
      new Error("Client has encountered a connection error and is not queryable"),
      new Error("timeout exceeded when trying to connect"),
    ];
    const no = [
      Object.assign(new Error("duplicate key value violates unique constraint"), { code: "23505" }),
      Object.assign(new Error('relation "x" does not exist'), { code: "42P01" }),
      new Error("something else"),
      "Connection terminated",
    ];
    for (const err of yes) expect(isDatabaseUnavailable(err), String(err)).toBe(true);
    for (const err of no) expect(isDatabaseUnavailable(err), String(err)).toBe(false);
  });
});

describe("a write under an RPC's deadline", () => {
  let pglite: Awaited<ReturnType<typeof kitPglite>>;
  let db: Db;
  beforeAll(async () => {
    pglite = await kitPglite();
    db = await pglite.fresh();
    await db.exec(`CREATE TABLE ${db.schema}.writes (n int)`);
  });
  afterAll(() => pglite.close());

  it("is rolled back when the deadline passed before it committed", async () => {
    const deadline = new AbortController();
    const late = db.tx(async (q) => {
      await q.query(`INSERT INTO ${db.schema}.writes VALUES (1)`);
      // The caller gives up (its deadline) while the handler is still working.
      deadline.abort();
      checkDeadline(deadline.signal);
    });
    const err = await late.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.DeadlineExceeded);
    expect(await db.query(`SELECT n FROM ${db.schema}.writes`)).toEqual([]);

    await db.tx(async (q) => {
      await q.query(`INSERT INTO ${db.schema}.writes VALUES (2)`);
      checkDeadline(new AbortController().signal);
    });
    expect(await db.query(`SELECT n FROM ${db.schema}.writes`)).toEqual([{ n: 2 }]);
  });
});
