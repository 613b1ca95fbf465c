import { seededId } from "@platform/kit/ids";
import { capturingLogger } from "@platform/kit/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { LoggedRequest, RequestLogSink } from "../src/app.js";
import type { GatewayConfig } from "../src/config.js";
import {
  API,
  buildTestGateway,
  CHILD_ORG,
  get,
  ORG,
  PARTNER_ORG,
  PARTNER_SCOPES,
  request,
  type TestGateway,
} from "./harness.js";

// The request log's publisher (request-log.ts): one summary per request with a valid key,
// nothing sensitive in it, sent in batches off the request path, so a failing or stuck sink
// never fails or holds a request.

const ME = `${API}/organizations/me`;

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.app.close();
  gw = undefined;
});

/** A gateway whose request log goes to `sink` (every batch recorded by default). */
async function loggedGateway(opts: { sink?: RequestLogSink; config?: Partial<GatewayConfig>; lines?: unknown[] } = {}) {
  const batches: LoggedRequest[][] = [];
  const sink: RequestLogSink =
    opts.sink ??
    (async (batch) => {
      batches.push(batch.requests);
    });
  gw = await buildTestGateway({
    requestLogSink: sink,
    config: { REQUEST_LOG_FLUSH_MS: 10, ...opts.config },
    ...(opts.lines ? { logger: capturingLogger("gw", "info", opts.lines as Record<string, unknown>[]) } : {}),
  });
  const key = gw.identity.addToken({ orgId: ORG, scopes: ["organizations:read", "users:read", "users:write"] });
  return { gw, key, batches, logged: () => batches.flat() };
}

describe("request log summaries", () => {
  it("records method, route template, status and key id, never the key, the query or a header", async () => {
    const { gw, key, batches, logged } = await loggedGateway();
    const res = await get(gw.app, `${API}/users?search=s3cr3t-query-value`, key, {
      authorization: "Bearer s3cr3t-header-value",
      "x-request-id": "trace-log-1",
    });
    expect(res.statusCode).toBe(200);
    await vi.waitFor(() => expect(logged()).toHaveLength(1));
    const [record] = logged();
    expect(record).toEqual({
      requestId: "trace-log-1",
      method: "GET",
      route: "/users",
      status: 200,
      durationMs: expect.any(Number),
      keyId: "tok_1",
      orgId: ORG,
      time: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
    const text = JSON.stringify(batches);
    for (const secret of [key, "s3cr3t-query-value", "s3cr3t-header-value"]) expect(text).not.toContain(secret);
  });

  it("records the path ids, the problem of an error and the Idempotency-Key of a write", async () => {
    const { gw, key, logged } = await loggedGateway();
    const userId = seededId("usr_", "request-log-test", "nobody");
    const missing = `${API}/users/${userId}`;
    expect((await get(gw.app, missing, key)).statusCode).toBe(404);
    const write = await request(gw.app, "POST", `${API}/users`, key, { email: "" }, { "idempotency-key": "idem-42" });
    expect(write.statusCode).toBe(400);
    await vi.waitFor(() => expect(logged()).toHaveLength(2));
    expect(logged()[0]).toMatchObject({
      route: "/users/{userId}",
      pathIds: { userId },
      status: 404,
      problemType: "user-not-found",
    });
    expect(logged()[1]).toMatchObject({ method: "POST", route: "/users", idempotencyKey: "idem-42", status: 400 });
  });

  it("records refusals of a valid key (scope) but no request without a valid key", async () => {
    const { gw, key, logged } = await loggedGateway();
    const noScope = gw.identity.addToken({ orgId: ORG, scopes: [] });
    expect((await get(gw.app, ME, noScope)).statusCode).toBe(403);
    expect((await get(gw.app, ME)).statusCode).toBe(401);
    expect((await get(gw.app, ME, "pk_live_not-a-key")).statusCode).toBe(401);
    expect((await get(gw.app, ME, key)).statusCode).toBe(200);
    await vi.waitFor(() => expect(logged()).toHaveLength(2));
    expect(logged().map((r) => [r.keyId, r.status, r.problemType])).toEqual([
      ["tok_2", 403, "insufficient-scope"],
      ["tok_1", 200, undefined],
    ]);
  });

  it("records a partner's request on a child under the partner's org, with actingOn the child", async () => {
    const { gw, logged } = await loggedGateway();
    const partnerKey = gw.identity.addToken({ orgId: PARTNER_ORG, scopes: PARTNER_SCOPES });
    const res = await get(gw.app, ME, partnerKey, { "x-platform-acting-on": CHILD_ORG });
    expect(res.statusCode).toBe(200);
    await vi.waitFor(() => expect(logged()).toHaveLength(1));
    expect(logged()[0]).toMatchObject({ orgId: PARTNER_ORG, actingOn: CHILD_ORG, status: 200 });
  });

  it("sends summaries in batches of REQUEST_LOG_BATCH at most", async () => {
    const { gw, key, batches, logged } = await loggedGateway({
      config: { REQUEST_LOG_BATCH: 2, REQUEST_LOG_FLUSH_MS: 10_000 },
    });
    for (let i = 0; i < 5; i += 1) expect((await get(gw.app, ME, key)).statusCode).toBe(200);
    await vi.waitFor(() => expect(logged()).toHaveLength(4));
    expect(batches.every((b) => b.length === 2)).toBe(true);
    // The fifth goes out with the timer, or when the gateway closes.
    await gw.app.close();
    expect(logged()).toHaveLength(5);
  });

  it("is off with REQUEST_LOG=false", async () => {
    const { gw, key, logged } = await loggedGateway({ config: { REQUEST_LOG: false } });
    expect((await get(gw.app, ME, key)).statusCode).toBe(200);
    await gw.app.close();
    expect(logged()).toEqual([]);
  });
});

describe("a failing or stuck request log", () => {
  it("never holds a request: with the sink stuck, requests are answered and the buffer stays bounded", async () => {
    let calls = 0;
    const lines: Record<string, unknown>[] = [];
    const { gw, key } = await loggedGateway({
      // A bus that never answers: the first batch stays in flight for good.
      sink: () => {
        calls += 1;
        return new Promise<void>(() => {});
      },
      config: { REQUEST_LOG_BATCH: 2, REQUEST_LOG_BUFFER: 4 },
      lines,
    });
    for (let i = 0; i < 20; i += 1) expect((await get(gw.app, ME, key)).statusCode).toBe(200);
    expect(calls).toBe(1);
    const dropped = lines.filter(
      (l) => l.msg === "request log summaries dropped (the requests themselves were served)",
    );
    // Logged once for the outage, not once per dropped summary.
    expect(dropped).toHaveLength(1);
  });

  it("never fails a request: a sink that throws or rejects only loses its batch", async () => {
    let calls = 0;
    const { gw, key } = await loggedGateway({
      sink: (batch) => {
        calls += 1;
        if (calls % 2 === 0) throw new Error("bus exploded synchronously");
        return Promise.reject(new Error(`bus down (${batch.requests.length})`));
      },
      config: { REQUEST_LOG_BATCH: 1 },
    });
    for (let i = 0; i < 6; i += 1) expect((await get(gw.app, ME, key)).statusCode).toBe(200);
    await vi.waitFor(() => expect(calls).toBeGreaterThanOrEqual(2));
  });
});
