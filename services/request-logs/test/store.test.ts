import type { PGlite } from "@electric-sql/pglite";
import { ManualClock } from "@platform/kit/clock";
import { createCursorCodec } from "@platform/kit/cursor";
import { type Db, openPglite, pgliteDb } from "@platform/kit/db";
import { seededId } from "@platform/kit/ids";
import { kitMigrations, migrate } from "@platform/kit/migrate";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { recordRequests } from "../src/application/record.js";
import { purgeRequestLogs } from "../src/application/retention.js";
import { recordsOfBatch } from "../src/domain/logged.js";
import type { RequestLogRecord } from "../src/domain/request-log.js";
import { requestLogHandlers } from "../src/handlers/request-logs.handler.js";
import { REQUEST_LOGS_SCHEMA, requestLogsMigrations } from "../src/server.js";
import { partitionStore } from "../src/store/partitions.store.js";
import { requestLogStore } from "../src/store/request-log.store.js";
import { apiCall } from "./context.js";

// The log on PGlite: day partitions, retention by the injectable clock, idempotent batches,
// and the reads (filters, cursor, 404 across orgs) through the handlers.

const ACME = seededId("org_", "request-logs-test", "acme");
const UMBRELLA = seededId("org_", "request-logs-test", "umbrella");
const GLOBEX = seededId("org_", "request-logs-test", "globex");
const KEY_A = seededId("tok_", "request-logs-test", "a");
const KEY_B = seededId("tok_", "request-logs-test", "b");
const SECRET = "cursor-secret-for-tests-0123456789abcdef";

let pg: PGlite;
let db: Db;
const clock = new ManualClock("2026-03-10T12:00:00Z");

const record = (n: number, extra: Partial<RequestLogRecord> = {}): RequestLogRecord => ({
  requestId: `req_${String(n).padStart(4, "0")}`,
  orgId: ACME,
  createdAt: new Date(clock.now().getTime() - n * 60_000),
  method: "GET",
  route: "/deals/{dealId}",
  pathIds: { dealId: "deal_d5ebr7cwzp013zsxaeyc7t51" },
  status: 200,
  problemType: null,
  durationMs: 3.25,
  keyId: KEY_A,
  actingOn: null,
  idempotencyKey: null,
  ...extra,
});

const knownDays = new Set<number>();
const recording = () => ({ db, clock, knownDays });

beforeAll(async () => {
  pg = await openPglite();
  db = pgliteDb(pg, REQUEST_LOGS_SCHEMA);
  await migrate(db, [kitMigrations, requestLogsMigrations]);
});

afterAll(async () => {
  await pg?.close();
});

beforeEach(async () => {
  clock.set("2026-03-10T12:00:00Z");
  knownDays.clear();
  for (const name of await partitionStore(db).listPartitions()) await partitionStore(db).dropPartition(name);
});

describe("recording", () => {
  it("creates the day partitions it needs and inserts a batch once, however often it is redelivered", async () => {
    const batch = [record(1), record(2), record(60 * 25, { status: 404, problemType: "deal-not-found" })];
    expect(await recordRequests(recording(), batch)).toBe(3);
    expect(await recordRequests(recording(), batch)).toBe(0);
    knownDays.clear(); // another process, or a restart: the partitions exist already
    expect(await recordRequests(recording(), [...batch, record(3)])).toBe(1);
    expect(await partitionStore(db).listPartitions()).toEqual(["request_logs_20260309", "request_logs_20260310"]);
    const rows = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM request_logs.request_logs");
    expect(rows[0]?.n).toBe(4);
  });

  it("skips records older than the 7 days kept or a day ahead of the clock", async () => {
    const old = record(60 * 24 * 8);
    const ahead = record(-60 * 25);
    expect(await recordRequests(recording(), [old, ahead, record(1)])).toBe(1);
  });

  it("stores a batch whose summaries hold a NUL (no text column takes one): the NUL replaced, nothing lost", async () => {
    const nul = "\u0000";
    const logged = (n: number, text: string) => ({
      requestId: `req_nul_${n}`,
      orgId: ACME,
      keyId: KEY_A,
      time: new Date(clock.now().getTime() - 60_000).toISOString(),
      method: "GET",
      route: `/deals/{dealId}${text}`,
      pathIds: { dealId: `deal_${text}` },
      status: 404,
      problemType: "deal-not-found",
      durationMs: 1,
      idempotencyKey: `k${text}`,
    });
    const records = recordsOfBatch({ requests: [logged(1, nul), logged(2, "")] });
    expect(await recordRequests(recording(), records)).toBe(2);
    const rows = await db.query<{ route: string; path_ids: Record<string, string> }>(
      "SELECT route, path_ids FROM request_logs.request_logs WHERE request_id = 'req_nul_1'",
    );
    expect(rows[0]?.route).toBe("/deals/{dealId}\uFFFD");
  });
});

describe("retention", () => {
  it("keeps today's and tomorrow's partitions and drops days wholly older than 7 days", async () => {
    await recordRequests(recording(), [record(1), record(60 * 24 * 6)]);
    expect(await purgeRequestLogs(db, clock, knownDays)).toEqual([]);
    expect(await partitionStore(db).listPartitions()).toEqual([
      "request_logs_20260304",
      "request_logs_20260310",
      "request_logs_20260311",
    ]);
    // Two days on, the 4th ended more than 7 days ago: its partition goes, with its rows.
    clock.set("2026-03-12T00:30:00Z");
    expect(await purgeRequestLogs(db, clock, knownDays)).toEqual(["request_logs_20260304"]);
    expect(await partitionStore(db).listPartitions()).toEqual([
      "request_logs_20260310",
      "request_logs_20260311",
      "request_logs_20260312",
      "request_logs_20260313",
    ]);
    const rows = await db.query<{ request_id: string }>("SELECT request_id FROM request_logs.request_logs");
    expect(rows.map((r) => r.request_id)).toEqual(["req_0001"]);
  });
});

describe("reads", () => {
  const handlers = () => requestLogHandlers({ store: requestLogStore(db), clock, cursors: createCursorCodec(SECRET) });
  const list = (orgId: string, req: Record<string, unknown> = {}) =>
    handlers().listRequestLogs(
      {
        cursor: "",
        limit: 0,
        status: 0,
        statusClass: "",
        method: "",
        route: "",
        problemType: "",
        keyId: "",
        ...req,
      } as never,
      apiCall(orgId),
    );

  beforeEach(async () => {
    await recordRequests(recording(), [
      record(1),
      record(2, { method: "POST", route: "/deals", pathIds: {}, status: 201, idempotencyKey: "idem-1", keyId: KEY_B }),
      record(3, { status: 404, problemType: "deal-not-found" }),
      record(4, { status: 429, problemType: "rate-limit-exceeded" }),
      record(5, { status: 503, problemType: "service-unavailable" }),
      record(6, { actingOn: GLOBEX, route: "/organizations/{orgId}", pathIds: { orgId: GLOBEX } }),
      record(7, { orgId: UMBRELLA }),
    ]);
  });

  it("lists the org's own records newest first and pages with the cursor", async () => {
    const first = await list(ACME, { limit: 4 });
    expect(first.requestLogs!.map((r) => r.requestId)).toEqual(["req_0001", "req_0002", "req_0003", "req_0004"]);
    expect(first.nextCursor).not.toBe("");
    const second = await list(ACME, { limit: 4, cursor: first.nextCursor });
    expect(second.requestLogs!.map((r) => r.requestId)).toEqual(["req_0005", "req_0006"]);
    expect(second.nextCursor).toBe("");
    const partner = second.requestLogs![1]!;
    expect(partner.actingOn).toBe(GLOBEX);
    expect(partner.orgId).toBe(ACME);
    expect(partner.pathIds).toEqual({ orgId: GLOBEX });
  });

  it("filters on status, status class, method, route, problem type, key and time", async () => {
    const ids = async (req: Record<string, unknown>) => (await list(ACME, req)).requestLogs!.map((r) => r.requestId);
    expect(await ids({ status: 404 })).toEqual(["req_0003"]);
    expect(await ids({ statusClass: "4xx" })).toEqual(["req_0003", "req_0004"]);
    expect(await ids({ statusClass: "2xx" })).toEqual(["req_0001", "req_0002", "req_0006"]);
    expect(await ids({ method: "post" })).toEqual(["req_0002"]);
    expect(await ids({ route: "/deals/{dealId}" })).toEqual(["req_0001", "req_0003", "req_0004", "req_0005"]);
    expect(await ids({ problemType: "https://docs.example/platform-api/errors/deal-not-found" })).toEqual(["req_0003"]);
    expect(await ids({ keyId: KEY_B })).toEqual(["req_0002"]);
    const at = (minutesAgo: number) => ({
      seconds: BigInt((clock.now().getTime() - minutesAgo * 60_000) / 1000),
      nanos: 0,
    });
    expect(await ids({ from: at(4), to: at(2) })).toEqual(["req_0003", "req_0004"]);
  });

  it("refuses a status class or status it does not know, and a to before from", async () => {
    await expect(list(ACME, { statusClass: "6xx" })).rejects.toMatchObject({ problemName: "invalid-filter" });
    await expect(list(ACME, { status: 42 })).rejects.toMatchObject({ problemName: "invalid-filter" });
    const at = (s: number) => ({ seconds: BigInt(s), nanos: 0 });
    const now = clock.now().getTime() / 1000;
    await expect(list(ACME, { from: at(now - 60), to: at(now - 120) })).rejects.toMatchObject({
      problemName: "invalid-filter",
    });
  });

  it("finds a record by request id, and another org's like an unknown one: request-log-not-found", async () => {
    const found = await handlers().getRequestLog({ requestId: "req_0002" } as never, apiCall(ACME));
    expect(found.requestLog).toMatchObject({ requestId: "req_0002", status: 201, idempotencyKey: "idem-1" });
    for (const [orgId, id] of [
      [UMBRELLA, "req_0002"],
      [ACME, "req_0007"],
      [ACME, "req_nope"],
    ] as const) {
      await expect(handlers().getRequestLog({ requestId: id } as never, apiCall(orgId))).rejects.toMatchObject({
        problemName: "request-log-not-found",
      });
    }
  });
});
