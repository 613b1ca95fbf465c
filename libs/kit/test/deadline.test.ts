import { setTimeout as sleep } from "node:timers/promises";
import { Code, ConnectError, type ConnectRouter, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus } from "@platform/contracts/health";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorInterceptor, httpTransport, type RunningServer, serveConnect } from "../src/connect.js";
import { type Db, openPglite, pgliteDb } from "../src/db.js";
import { createLogger } from "../src/logger.js";

// Two Connect servers over HTTP/2 on loopback: the caller ("front") serves Health/Check and
// calls the callee ("back") from its handler, as revenue calls crm-data.
const SERVING = { status: HealthCheckResponse_ServingStatus.SERVING };
const codeOf = (err: unknown) => (err instanceof ConnectError ? Code[err.code] : String(err));

interface Seen {
  timeoutMs?: number | undefined;
  abortedAfterMs?: number;
  error?: string;
  queries?: number;
  background?: unknown;
}
let seen: Seen = {};
let backCalls = 0;
let db: Db;
let close: () => Promise<void>;
let front: RunningServer;
let back: RunningServer;
const logger = createLogger("test", "silent");

const backRoutes = (router: ConnectRouter) =>
  router.service(Health, {
    async check(req, ctx) {
      backCalls++;
      const started = Date.now();
      seen.timeoutMs = ctx.timeoutMs();
      if (req.service === "wait") {
        await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
        seen.abortedAfterMs = Date.now() - started;
      }
      if (req.service === "read") {
        // A read that would go on for seconds: a query every 20 ms.
        seen.queries = 0;
        try {
          for (let i = 0; i < 40; i++) {
            await db.query("SELECT 1");
            seen.queries++;
            await sleep(20);
          }
        } catch (err) {
          seen.error = codeOf(err);
          seen.abortedAfterMs = Date.now() - started;
          throw err;
        }
      }
      if (req.service === "few") {
        seen.queries = 0;
        for (let i = 0; i < 3; i++) {
          await db.query("SELECT 1");
          seen.queries++;
        }
      }
      if (req.service === "write") {
        await db.tx(async (q) => {
          await q.query("INSERT INTO deadline_t (v) VALUES ('late')");
          await sleep(400);
        });
      }
      if (req.service === "cut") {
        // What pg throws when the transaction's statement_timeout cuts a query.
        throw Object.assign(new Error("canceling statement due to statement timeout"), { code: "57014" });
      }
      if (req.service === "background") {
        // Set off and left running: it outlives the call and its deadline.
        void sleep(400)
          .then(() => db.query("SELECT 1 AS one"))
          .then(
            (rows) => {
              seen.background = rows;
            },
            (err: unknown) => {
              seen.background = codeOf(err);
            },
          );
      }
      return SERVING;
    },
  });

beforeAll(async () => {
  const pglite = await openPglite();
  db = pgliteDb(pglite, "public");
  await db.exec("CREATE TABLE deadline_t (v text)");
  close = () => pglite.close();
  back = await serveConnect({
    routes: backRoutes,
    interceptors: [errorInterceptor(logger)],
    port: 0,
    host: "127.0.0.1",
  });
  const toBack = createClient(Health, httpTransport(`http://127.0.0.1:${back.port}`, [], { timeoutMs: 5000 }));
  front = await serveConnect({
    routes: (router) =>
      router.service(Health, {
        async check(req, ctx) {
          if (req.service === "late") {
            await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
            try {
              await toBack.check({ service: "echo" });
            } catch (err) {
              seen.error = codeOf(err);
              throw err;
            }
          } else {
            await sleep(100);
            await toBack.check({ service: req.service });
          }
          return SERVING;
        },
      }),
    interceptors: [errorInterceptor(logger)],
    port: 0,
    host: "127.0.0.1",
  });
});
afterAll(async () => {
  await front?.close();
  await back?.close();
  await close?.();
});

const client = (timeoutMs: number) =>
  createClient(Health, httpTransport(`http://127.0.0.1:${front.port}`, [], { timeoutMs }));
const callee = (timeoutMs: number) =>
  createClient(Health, httpTransport(`http://127.0.0.1:${back.port}`, [], { timeoutMs }));

describe("deadlines across service calls", () => {
  it("gives a service's call to another what remains of the deadline of the call it serves", async () => {
    seen = {};
    const started = Date.now();
    await expect(client(2000).check({ service: "wait" })).rejects.toMatchObject({ code: Code.DeadlineExceeded });
    // The front spent 100 ms before calling: the back was given the rest, not its 5 s default.
    // (A 100 ms timer can fire a millisecond early against the wall clock, and the rest is
    // rounded up: CI once saw 1901.)
    expect(seen.timeoutMs).toBeGreaterThan(0);
    expect(seen.timeoutMs).toBeLessThanOrEqual(1910);
    // And its handler was told to stop at the front's deadline.
    await expect.poll(() => seen.abortedAfterMs, { timeout: 3000 }).toBeDefined();
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it("caps the inherited deadline by the transport's own", async () => {
    seen = {};
    await client(30_000).check({ service: "echo" });
    expect(seen.timeoutMs).toBeGreaterThan(4000);
    expect(seen.timeoutMs).toBeLessThanOrEqual(5000);
  });

  it("does not make a call once the deadline of the call it serves has passed", async () => {
    seen = {};
    const before = backCalls;
    await expect(client(300).check({ service: "late" })).rejects.toMatchObject({ code: Code.DeadlineExceeded });
    await expect.poll(() => seen.error, { timeout: 2000 }).toBe("DeadlineExceeded");
    expect(backCalls).toBe(before);
  });
});

describe("work inside a service past its deadline", () => {
  it("stops a read at its deadline instead of running on after the caller was answered", async () => {
    seen = {};
    await expect(callee(300).check({ service: "read" })).rejects.toMatchObject({ code: Code.DeadlineExceeded });
    await expect.poll(() => seen.error, { timeout: 2000 }).toBe("DeadlineExceeded");
    // Stopped at the deadline (its handler starts a little after the call's clock does), not
    // after its 40 queries (≥ 800 ms).
    expect(seen.abortedAfterMs).toBeLessThan(700);
    expect(seen.queries).toBeLessThan(40);
  });

  it("stops a read when its caller goes away", async () => {
    seen = {};
    const gone = new AbortController();
    setTimeout(() => gone.abort(), 150);
    await expect(callee(30_000).check({ service: "read" }, { signal: gone.signal })).rejects.toMatchObject({
      code: Code.Canceled,
    });
    await expect.poll(() => seen.error, { timeout: 2000 }).toBe("DeadlineExceeded");
    expect(seen.abortedAfterMs).toBeLessThan(700);
    expect(seen.queries).toBeLessThan(40);
  });

  it("checks the deadline before each query without making the call's AbortSignal", async () => {
    // The lean server makes a call's signal (a controller, a timer, a close listener) only when
    // something reads it; the check before each query must not, or every call pays for one.
    const made: string[] = [];
    const Original = globalThis.AbortController;
    globalThis.AbortController = class extends Original {
      constructor() {
        super();
        made.push(new Error().stack ?? "");
      }
    };
    try {
      seen = {};
      await callee(5000).check({ service: "few" });
    } finally {
      globalThis.AbortController = Original;
    }
    expect(seen.queries).toBe(3);
    expect(made.filter((stack) => stack.includes("unary-handler"))).toEqual([]);
  });

  it("rolls back a transaction that reaches its commit past the deadline", async () => {
    await expect(callee(200).check({ service: "write" })).rejects.toMatchObject({ code: Code.DeadlineExceeded });
    await sleep(400);
    expect(await db.query("SELECT v FROM deadline_t")).toEqual([]);
  });

  it("does not bind work the handler leaves running to the call's deadline", async () => {
    seen = {};
    await callee(200).check({ service: "background" });
    await expect.poll(() => seen.background, { timeout: 2000 }).toEqual([{ one: 1 }]);
  });

  it("leaves calls without a deadline alone", async () => {
    const direct = createClient(
      Health,
      createConnectTransport({ baseUrl: `http://127.0.0.1:${back.port}`, httpVersion: "2", useBinaryFormat: true }),
    );
    seen = {};
    await direct.check({ service: "read" });
    expect(seen.timeoutMs).toBeUndefined();
    expect(seen.queries).toBe(40);
  });

  it("answers a query cut by the transaction's statement_timeout as DeadlineExceeded, not internal", async () => {
    await expect(callee(5000).check({ service: "cut" })).rejects.toMatchObject({ code: Code.DeadlineExceeded });
  });
});
