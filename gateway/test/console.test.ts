import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  API,
  buildTestGateway,
  CHILD_ORG,
  expectProblem,
  get,
  ORG,
  PARTNER_ORG,
  PARTNER_SCOPES,
  REVOKED_CHILD_ORG,
  type TestGateway,
} from "./harness.js";

// The developer console's two footholds in the gateway: GET /api-keys/current (what the key
// may do, for the overview and for hiding actions) and /console, its build served with a
// strict Content-Security-Policy.

const CURRENT = `${API}/api-keys/current`;
const dir = mkdtempSync(join(tmpdir(), "console-build-"));
const INDEX =
  '<!doctype html><html lang="en"><script type="module" src="/console/assets/main-ABC123.js"></script></html>';
let gw: TestGateway;
let unbuilt: TestGateway;

beforeAll(async () => {
  mkdirSync(join(dir, "assets"));
  writeFileSync(join(dir, "index.html"), INDEX);
  writeFileSync(join(dir, "assets", "main-ABC123.js"), "console.log('console')");
  gw = await buildTestGateway({ config: { CONSOLE_DIR: dir } });
  unbuilt = await buildTestGateway({ config: { CONSOLE_DIR: join(dir, "missing") } });
});
afterAll(async () => {
  await gw.app.close();
  await unbuilt.app.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("GET /api-keys/current", () => {
  it("answers any valid key, even one without scopes, with its org, scopes, expiry and partner flag", async () => {
    const expiresAt = new Date("2026-06-01T00:00:00Z");
    const key = gw.identity.addToken({ orgId: ORG, scopes: [], expireTime: expiresAt });
    const res = await get(gw.app, CURRENT, key);
    expect(res.statusCode).toBe(200);
    expect(res.headers.ratelimit).toMatch(/^"read";r=\d+;t=\d+$/);
    expect(res.json()).toEqual({
      keyId: expect.stringMatching(/^tok_/),
      orgId: ORG,
      scopes: [],
      expiresAt: expiresAt.toISOString(),
      partner: false,
      actingOn: null,
      effectiveScopes: [],
    });
    expect(res.body).not.toContain(key);
  });

  it("says partner and, acting on a child, the scopes the child granted", async () => {
    const key = gw.identity.addToken({ orgId: PARTNER_ORG, scopes: PARTNER_SCOPES });
    const own = (await get(gw.app, CURRENT, key)).json();
    expect(own).toMatchObject({ orgId: PARTNER_ORG, partner: true, expiresAt: null, actingOn: null });
    expect(own.effectiveScopes).toEqual(PARTNER_SCOPES);
    const child = await get(gw.app, CURRENT, key, { "x-platform-acting-on": CHILD_ORG });
    expect(child.statusCode).toBe(200);
    expect(child.headers["platform-acting-on"]).toBe(CHILD_ORG);
    expect(child.json()).toMatchObject({ orgId: PARTNER_ORG, actingOn: CHILD_ORG, scopes: PARTNER_SCOPES });
    expect(child.json().effectiveScopes.sort()).toEqual(["deals:read", "deals:write", "organizations:read"]);
    expectProblem(
      await get(gw.app, CURRENT, key, { "x-platform-acting-on": REVOKED_CHILD_ORG }),
      "cross-org-delegation-forbidden",
    );
  });

  it("refuses a missing key with the spec's 401", async () => {
    expectProblem(await get(gw.app, CURRENT), "missing-trust-header");
  });
});

describe("/console", () => {
  it("serves the page for the console and each of its routes, with the security headers", async () => {
    for (const url of ["/console", "/console/", "/console/webhooks/sub_1"]) {
      const res = await get(gw.app, url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
      expect(res.body).toBe(INDEX);
      expect(res.headers["content-security-policy"]).toContain("script-src 'self'");
      expect(res.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
      expect(res.headers["content-security-policy"]).not.toContain("unsafe");
      expect(res.headers["x-frame-options"]).toBe("DENY");
      expect(res.headers["referrer-policy"]).toBe("no-referrer");
      expect(res.headers["cache-control"]).toBe("no-cache");
    }
  });

  it("serves hashed assets as immutable, answers 304 to their ETag, and 404 problem+json to others", async () => {
    const res = await get(gw.app, "/console/assets/main-ABC123.js");
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(res.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    const etag = String(res.headers.etag);
    expect((await get(gw.app, "/console/assets/main-ABC123.js", undefined, { "if-none-match": etag })).statusCode).toBe(
      304,
    );
    expectProblem(await get(gw.app, "/console/assets/main-OLD.js"), "not-found");
  });

  it("is not part of the OpenAPI document", async () => {
    const doc = (await get(gw.app, `${API}/openapi.json`)).json();
    expect(Object.keys(doc.paths).some((p) => p.startsWith("/console"))).toBe(false);
    expect(doc.paths["/api/v1alpha1/api-keys/current"].get.operationId).toBe("getCurrentApiKey");
  });

  it("without a build, says how to build it in a 404 problem", async () => {
    const body = expectProblem(await get(unbuilt.app, "/console"), "not-found");
    expect(body.detail).toContain("npm run build");
  });
});
