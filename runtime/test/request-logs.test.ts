import { seededId } from "@platform/kit/ids";
import { sandboxOrgId } from "@platform/sandbox";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { apiTest, CLOSE_TIMEOUT_MS, START_TIMEOUT_MS } from "./support/platform.js";

// Issue 52, item 5, through the public API of the embedded platform: a request made with one
// key is found by its requestId, with nothing sensitive in it; other orgs' records are
// indistinguishable from unknown ids; filters, cursors, the scope and the partner case.

const SEED = "request-logs-api-test";
const t = apiTest({ name: SEED });
const ACME = sandboxOrgId(SEED, "acme");
const NORTHWIND = sandboxOrgId(SEED, "northwind");
const GLOBEX = sandboxOrgId(SEED, "globex");
const NOBODY = seededId("usr_", SEED, "nobody");

beforeAll(() => t.start(), START_TIMEOUT_MS);
afterAll(() => t.close(), CLOSE_TIMEOUT_MS);

/** The org's record of `requestId`, polled for (the log is written off the request path). */
async function logged(requestId: string, as = "acme-full") {
  let body: Record<string, unknown> = {};
  await vi.waitFor(
    async () => {
      const res = await t.call("GET", `/request-logs/${requestId}`, { as });
      expect(res.statusCode, res.body).toBe(200);
      body = res.json();
    },
    { timeout: 5_000, interval: 50 },
  );
  return body;
}

describe("GET /request-logs/{requestId}", () => {
  it("finds a request made with one key by its requestId, with nothing sensitive in it", async () => {
    const res = await t.call("GET", `/users?search=s3cr3t-in-the-query`, {
      headers: { "x-request-id": "rl-find-me-1", authorization: "Bearer s3cr3t-in-a-header" },
    });
    expect(res.statusCode).toBe(200);
    const record = await logged("rl-find-me-1");
    expect(record).toEqual({
      requestId: "rl-find-me-1",
      method: "GET",
      route: "/users",
      pathIds: {},
      status: 200,
      problemType: null,
      durationMs: expect.any(Number),
      keyId: t.tokenIds["acme-full"],
      orgId: ACME,
      actingOn: null,
      idempotencyKey: null,
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
    const text = JSON.stringify(record);
    for (const secret of [t.keys["acme-full"]!, "s3cr3t-in-the-query", "s3cr3t-in-a-header", "Bearer"]) {
      expect(text).not.toContain(secret);
    }
  });

  it("records a write's problem, path ids and Idempotency-Key", async () => {
    // No If-Match: refused before anything is written, with its problem.
    const res = await t.call("PATCH", `/users/${NOBODY}`, {
      body: { firstName: "Nobody" },
      headers: { "x-request-id": "rl-write-1", "idempotency-key": "rl-idem-1" },
    });
    expect(res.statusCode).toBe(412);
    const record = await logged("rl-write-1");
    expect(record).toMatchObject({
      method: "PATCH",
      route: "/users/{userId}",
      pathIds: { userId: NOBODY },
      status: 412,
      problemType: "precondition-failed",
      idempotencyKey: "rl-idem-1",
    });
    expect(JSON.stringify(record)).not.toContain("Nobody");
  });

  it("answers another org's requestId exactly as an unknown one: 404 request-log-not-found", async () => {
    await t.call("GET", "/organizations/me", { headers: { "x-request-id": "rl-acme-only" } });
    await logged("rl-acme-only");
    const other = await t.call("GET", "/request-logs/rl-acme-only", { as: "umbrella-full" });
    const unknown = await t.call("GET", "/request-logs/rl-never-made", { as: "umbrella-full" });
    for (const res of [other, unknown]) {
      expect(res.statusCode).toBe(404);
      expect(res.json().type).toBe(t.problemType("request-log-not-found"));
    }
    expect(other.json().detail).toBe(unknown.json().detail.replace("rl-never-made", "rl-acme-only"));
  });

  it("answers an id no request could have (a NUL byte, a space, non-ASCII) as unknown: 404, never a 500", async () => {
    for (const id of ["%00", "a%20b", "%E2%9C%93"]) {
      const res = await t.call("GET", `/request-logs/${id}`);
      expect(res.statusCode, id).toBe(404);
      expect(res.json().type).toBe(t.problemType("request-log-not-found"));
    }
    // Those requests are logged too (a NUL in a path id would fail its batch's insert): a
    // request made right after them is still found.
    await t.call("GET", "/organizations/me", { headers: { "x-request-id": "rl-after-nul" } });
    await logged("rl-after-nul");
  });

  it("needs logs:read (403) and is not called acting on a child", async () => {
    const noScope = await t.call("GET", "/request-logs", { as: "acme-noscopes" });
    expect(noScope.statusCode).toBe(403);
    expect(noScope.json()).toMatchObject({ type: t.problemType("insufficient-scope"), requiredScope: "logs:read" });
    const acting = await t.call("GET", "/request-logs", {
      as: "northwind-partner",
      headers: { "x-platform-acting-on": GLOBEX },
    });
    expect(acting.statusCode).toBe(400);
    expect(acting.json().type).toBe(t.problemType("invalid-acting-on-org"));
  });
});

describe("GET /request-logs", () => {
  it("lists a partner's requests on a child under the partner's org, with actingOn the child", async () => {
    const res = await t.call("GET", "/organizations/me", {
      as: "northwind-partner",
      headers: { "x-platform-acting-on": GLOBEX, "x-request-id": "rl-partner-1" },
    });
    expect(res.statusCode).toBe(200);
    expect(await logged("rl-partner-1", "northwind-partner")).toMatchObject({
      orgId: NORTHWIND,
      actingOn: GLOBEX,
      route: "/organizations/me",
    });
    // It is in the partner's list too.
    const page = await t.ok("/request-logs?limit=100", { as: "northwind-partner" });
    expect(page.items.map((r: { requestId: string }) => r.requestId)).toContain("rl-partner-1");
  });

  it("lists newest first, filters, and pages with cursors bound to the org", async () => {
    for (let i = 1; i <= 3; i += 1) {
      // The platform's clock stands still otherwise: a second apart, the order is theirs.
      t.clock.advance(1_000);
      await t.call("GET", `/users/${NOBODY}`, { headers: { "x-request-id": `rl-list-${i}` } });
    }
    await logged("rl-list-3");
    const notFound = await t.ok(`/request-logs?status=404&route=${encodeURIComponent("/users/{userId}")}&method=GET`);
    const ids = notFound.items.map((r: { requestId: string }) => r.requestId);
    expect(ids.slice(0, 3)).toEqual(["rl-list-3", "rl-list-2", "rl-list-1"]);
    const byClass = await t.ok("/request-logs?statusClass=4xx&problemType=user-not-found&limit=100");
    expect(byClass.items.every((r: { status: number }) => r.status === 404)).toBe(true);
    const byKey = await t.ok(`/request-logs?keyId=${t.tokenIds["acme-full"]}&limit=100`);
    expect(byKey.items.length).toBeGreaterThanOrEqual(3);

    const first = await t.ok("/request-logs?limit=1&statusClass=4xx");
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await t.ok(`/request-logs?limit=1&statusClass=4xx&cursor=${encodeURIComponent(first.nextCursor)}`);
    expect(second.items[0].requestId).not.toBe(first.items[0].requestId);
    const stolen = await t.call("GET", `/request-logs?cursor=${encodeURIComponent(first.nextCursor)}`, {
      as: "umbrella-full",
    });
    expect(stolen.statusCode).toBe(400);
    expect(stolen.json().type).toBe(t.problemType("invalid-cursor"));
  });

  it("refuses malformed filters with 400 invalid-filter", async () => {
    for (const query of ["statusClass=6xx", "status=42", "from=yesterday", "method=BREW"]) {
      const res = await t.call("GET", `/request-logs?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().type).toBe(t.problemType("invalid-filter"));
    }
  });
});
