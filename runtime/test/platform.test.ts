import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { IdentityAdminService } from "@platform/contracts/identity";
import { gatewayConfigSpec } from "@platform/gateway/config";
import { ManualClock } from "@platform/kit/clock";
import { loadConfig } from "@platform/kit/config";
import { adminClientInterceptor, httpTransport } from "@platform/kit/connect";
import { createLogger } from "@platform/kit/logger";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmbeddedPlatform, type EmbeddedPlatform } from "../src/platform.js";

// API tests on the real embedded platform: gateway, identity service over the in-process
// Connect transport (signed context verified), PGlite, in-process bus, outbox relay.
const DOCS = "https://docs.embedded-test.example";
const API = "/api/v1alpha1";
const ADMIN_SECRET = "embedded-test-admin-secret";
const dataDir = mkdtempSync(join(tmpdir(), "platform-embedded-"));
const clock = new ManualClock(new Date("2026-03-02T10:00:00Z"));
const logger = createLogger("embedded-test", "silent");

function start(): Promise<EmbeddedPlatform> {
  return createEmbeddedPlatform({
    dataDir,
    clock,
    logger,
    gateway: loadConfig(gatewayConfigSpec, { PLATFORM_DOCS_URL: DOCS, LOG_LEVEL: "silent" }),
    sandboxSeed: "embedded-test",
    seedSandbox: true,
    adminSecret: ADMIN_SECRET,
    adminPort: 0,
  });
}

let platform: EmbeddedPlatform;
let keys: Record<string, { key: string; orgId: string }>;
let orgs: Record<string, string>;

const get = (url: string, key: string, headers: Record<string, string> = {}) =>
  platform.app.inject({ method: "GET", url: `${API}${url}`, headers: { "x-platform-api-key": key, ...headers } });
const admin = () =>
  createClient(
    IdentityAdminService,
    httpTransport(`http://127.0.0.1:${platform.admin?.port}`, [adminClientInterceptor(ADMIN_SECRET)]),
  );
const problemType = (name: string) => `${DOCS}/platform-api/errors/${name}`;

beforeAll(async () => {
  platform = await start();
  expect(platform.seeded).toBe(true);
  keys = Object.fromEntries((await platform.sandboxKeys()).map((k) => [k.name, k]));
  orgs = Object.fromEntries((await admin().listOrganizations({})).organizations.map((o) => [o.name, o.id]));
});
afterAll(async () => {
  await platform.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("embedded platform", () => {
  it("serves the caller's organization with every field and an ETag", async () => {
    const res = await get("/organizations/me", keys["acme-full"]!.key);
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toMatch(/^W\/"\d+"$/);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(
      [
        "administrator",
        "createdAt",
        "emailDomains",
        "employeeCount",
        "id",
        "industry",
        "logoUrl",
        "name",
        "primaryEmailDomain",
        "sourceRefs",
        "updatedAt",
      ].sort(),
    );
    expect(body).toMatchObject({ id: orgs["Acme Corp"], name: "Acme Corp" });
    expect(body.emailDomains).toContain(body.primaryEmailDomain);
    expect(body.administrator.userId).toMatch(/^usr_/);
    expect(body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    const byId = await get(`/organizations/${orgs["Acme Corp"]}`, keys["acme-full"]!.key);
    expect(byId.json()).toEqual(body);
    expect(byId.headers.etag).toBe(res.headers.etag);
  });

  it("answers 404 organization-not-found for any other organization", async () => {
    const res = await get(`/organizations/${orgs.Umbrella}`, keys["acme-full"]!.key);
    expect(res.statusCode).toBe(404);
    expect(res.json().type).toBe(problemType("organization-not-found"));
  });

  it("serves entitlements with the seat arithmetic and the cache header", async () => {
    const res = await get("/organizations/me/entitlements", keys["acme-readonly"]!.key);
    expect(res.statusCode).toBe(200);
    expect(res.headers["cache-control"]).toBe("private, max-age=60");
    const body = res.json();
    expect(Object.keys(body.features).sort()).toEqual(
      ["dealIntelApp", "emailBlast", "meetingAi", "replyTracking", "smartScheduling", "teamCalendarScheduling"].sort(),
    );
    expect(body.seats.total).toBe(10);
    expect(body.seats.available).toBe(body.seats.total - body.seats.used);
  });

  it("answers the 401 kinds for expired, revoked and unknown keys", async () => {
    const expired = await get("/organizations/me", keys["acme-expired"]!.key);
    expect(expired.statusCode).toBe(401);
    expect(expired.json()).toMatchObject({
      type: problemType("subscription-expired"),
      expiredAt: "2025-01-01T00:00:00.000Z",
    });
    const revoked = await get("/organizations/me", keys["acme-revoked"]!.key);
    expect(revoked.json().type).toBe(problemType("unknown-subscription"));
    const unknown = await get("/organizations/me", `pk_live_${"x".repeat(48)}`);
    expect(unknown.json().type).toBe(problemType("unknown-subscription"));
  });

  it("acts on a child with its grants and refuses revoked, unrelated and unknown orgs alike", async () => {
    const partner = keys["northwind-partner"]!.key;
    const ok = await get("/organizations/me", partner, { "x-platform-acting-on": orgs.Globex! });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers["platform-acting-on"]).toBe(orgs.Globex);
    expect(ok.json().id).toBe(orgs.Globex);

    const bodies = [];
    for (const target of [orgs.Hooli!, orgs.Umbrella!, "org_0000000000000000000000zz"]) {
      const res = await get("/organizations/me", partner, { "x-platform-acting-on": target });
      expect(res.statusCode).toBe(403);
      const { requestId: _r, ...body } = res.json();
      bodies.push(body);
    }
    expect(bodies[0]).toMatchObject({ type: problemType("cross-org-delegation-forbidden") });
    expect(bodies[1]).toEqual(bodies[0]);
    expect(bodies[2]).toEqual(bodies[0]);

    const notGranted = await get("/organizations/me/entitlements", partner, { "x-platform-acting-on": orgs.Globex! });
    expect(notGranted.statusCode).toBe(200);
    // Globex granted deals:read: the partner reads Globex's deals (the sandbox gives Globex none).
    const granted = await get("/deals", partner, { "x-platform-acting-on": orgs.Globex! });
    expect(granted.statusCode).toBe(200);
    expect(granted.headers["platform-acting-on"]).toBe(orgs.Globex);
    expect(granted.json()).toEqual({ items: [], nextCursor: null });
    const smart = await get("/smart-schedules", partner, { "x-platform-acting-on": orgs.Globex! });
    expect(smart.json()).toMatchObject({
      type: problemType("delegation-scope-insufficient"),
      requiredScope: "smart-scheduling:read",
    });
    expect(smart.json().grantedScopes).not.toContain("smart-scheduling:read");
  });

  it("purges a revoked key through the outbox and the bus", async () => {
    const created = await admin().createToken({ orgId: orgs["Acme Corp"]!, scopes: ["organizations:read"] });
    expect((await get("/organizations/me", created.key)).statusCode).toBe(200);
    await admin().revokeToken({ tokenId: created.token!.id });
    await platform.drainOutbox();
    await platform.bus.idle();
    const res = await get("/organizations/me", created.key);
    expect(res.statusCode).toBe(401);
    expect(res.json().type).toBe(problemType("unknown-subscription"));
  });

  it("keeps its data across a restart and does not seed twice", async () => {
    const created = await admin().createToken({
      orgId: orgs.Umbrella!,
      name: "survives",
      scopes: ["organizations:read"],
    });
    await platform.close();
    platform = await start();
    expect(platform.seeded).toBe(false);
    const res = await get("/organizations/me", created.key);
    expect(res.statusCode).toBe(200);
    expect(res.json().name).toBe("Umbrella");
  });
});
