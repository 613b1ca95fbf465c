import { readFileSync } from "node:fs";
import { create, toJson } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { DelegatedRequestServedSchema } from "@platform/contracts/events/gateway";
import { build, identityMigrations, logMailer, seedSandbox, startIdentityConsumers } from "@platform/identity/server";
import { isApiKeyShape } from "@platform/kit/api-keys";
import { ManualClock } from "@platform/kit/clock";
import { adminSecretInterceptor, errorInterceptor, type RunningServer, serveConnect } from "@platform/kit/connect";
import { type Db, openPglite, pgliteDb } from "@platform/kit/db";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import { InProcessBus } from "@platform/kit/in-process-bus";
import { createLogger } from "@platform/kit/logger";
import { kitMigrations, migrate } from "@platform/kit/migrate";
import { toBusMessage } from "@platform/kit/outbox";
import { PARTNER_SCOPE, READ_SCOPES } from "@platform/kit/scopes";
import { eventually } from "@platform/kit/testing";
import { sandboxFixtures, sandboxKeysOffline, sandboxMeetingId, sandboxOrgId } from "@platform/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run } from "../src/cli.js";
import { fixturesMarkdown } from "../src/format.js";

const SEED = "cli-test";
const SECRET = "cli-test-admin-secret";
const logger = createLogger("cli-test", "silent");

let pglite: Awaited<ReturnType<typeof openPglite>>;
let server: RunningServer;
let env: Record<string, string>;
let db: Db;
let bus: InProcessBus;

beforeAll(async () => {
  pglite = await openPglite();
  db = pgliteDb(pglite, "identity");
  await migrate(db, [kitMigrations, identityMigrations]);
  const clock = new ManualClock("2026-01-15T12:00:00Z");
  await seedSandbox(db, clock, SEED);
  const { adminRoutes } = build({ db, clock, logger, sandboxSeed: SEED, cursorSecret: "cli-test-cursor-secret" });
  server = await serveConnect({
    routes: adminRoutes,
    interceptors: [errorInterceptor(logger), adminSecretInterceptor(SECRET)],
    port: 0,
    host: "127.0.0.1",
  });
  // The audit log is fed by the gateway's events, through identity's own consumer.
  bus = new InProcessBus({ logger });
  await startIdentityConsumers({ db, bus, logger, mailer: logMailer(logger) });
  env = { PLATFORM_ADMIN_URL: `http://127.0.0.1:${server.port}`, PLATFORM_ADMIN_SECRET: SECRET, SANDBOX_SEED: SEED };
});
afterAll(async () => {
  await server?.close();
  await bus?.close();
  await pglite?.close();
});

async function platform(argv: string[], overrides: Record<string, string> = {}) {
  let stdout = "";
  let stderr = "";
  const code = await run(argv, {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    env: { ...env, ...overrides },
  });
  return { code, stdout, stderr, json: () => JSON.parse(stdout) };
}

const acme = () => sandboxOrgId(SEED, "acme");

describe("platform CLI against the admin plane", () => {
  it("creates, lists and revokes a token, with JSON only on stdout", async () => {
    const created = await platform([
      "tokens",
      "create",
      "--org",
      acme(),
      "--scopes",
      "read",
      "--name",
      "reporting",
      "--json",
    ]);
    expect(created).toMatchObject({ code: 0, stderr: "" });
    const { token, key } = created.json();
    expect(isApiKeyShape(key)).toBe(true);
    expect(token).toMatchObject({
      orgId: acme(),
      name: "reporting",
      scopes: READ_SCOPES,
      expiresAt: null,
      revokedAt: null,
    });

    const listed = await platform(["tokens", "list", "--org", acme(), "--json"]);
    expect(listed.code).toBe(0);
    expect(listed.json()[0]).toEqual(token);

    const revoked = await platform(["tokens", "revoke", token.id, "--json"]);
    expect(revoked.code).toBe(0);
    expect(revoked.json()).toMatchObject({ id: token.id, revokedAt: "2026-01-15T12:00:00.000Z" });
  });

  it("prints readable tables without --json", async () => {
    const listed = await platform(["tokens", "list", "--org", acme()]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^ID\s+ORG\s+NAME\s+STATUS/);
    expect(listed.stdout).toContain("acme-expired");
    expect(listed.stdout).toMatch(/acme-revoked\s+revoked/);

    const orgs = await platform(["orgs", "list"]);
    expect(orgs.stdout).toMatch(/Northwind Partners\s+yes/);
  });

  it("expands --scopes all to what the organization may hold", async () => {
    const partner = await platform([
      "tokens",
      "create",
      "--org",
      sandboxOrgId(SEED, "northwind"),
      "--scopes",
      "all",
      "--json",
    ]);
    expect(partner.json().token.scopes).toContain(PARTNER_SCOPE);
    const plain = await platform(["tokens", "create", "--org", acme(), "--scopes", "all", "--json"]);
    expect(plain.json().token.scopes).not.toContain(PARTNER_SCOPE);
  });

  it("shows sandbox keys with their current state", async () => {
    const before = await platform(["sandbox", "keys", "--json"]);
    expect(before.code).toBe(0);
    const keys = before.json();
    expect(keys.map((k: { key: string }) => k.key)).toEqual(sandboxKeysOffline(SEED).map((k) => k.key));
    const full = keys.find((k: { name: string }) => k.name === "acme-full");
    expect(Object.keys(full)).toEqual([
      "name",
      "key",
      "tokenId",
      "orgId",
      "orgName",
      "scopes",
      "expiresAt",
      "revokedAt",
    ]);
    expect(full).toMatchObject({ orgName: "Acme Corp", expiresAt: null, revokedAt: null });

    await platform(["tokens", "revoke", full.tokenId]);
    const after = (await platform(["sandbox", "keys", "--json"])).json();
    expect(after.find((k: { name: string }) => k.name === "acme-full").revokedAt).not.toBeNull();
  });

  it("reports problems as one line on stderr with exit code 1", async () => {
    const bad = await platform(["tokens", "create", "--org", acme(), "--scopes", "deals:read,deals:explode"]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toMatch(/^error: invalid-field: .*'deals:explode'.*\n$/);

    const unknown = await platform(["tokens", "revoke", "tok_missing"]);
    expect(unknown).toMatchObject({ code: 1, stderr: expect.stringMatching(/^error: not-found: /) });

    const wrongSecret = await platform(["orgs", "list"], { PLATFORM_ADMIN_SECRET: "not-the-secret-at-all" });
    expect(wrongSecret).toMatchObject({ code: 1, stderr: expect.stringContaining("PLATFORM_ADMIN_SECRET") });

    const badTime = await platform(["tokens", "create", "--org", acme(), "--scopes", "none", "--expires-at", "soon"]);
    expect(badTime).toMatchObject({ code: 1, stderr: expect.stringContaining("--expires-at") });
  });

  it("lists the delegation audit, newest first, as a table or JSON", async () => {
    const served = ["org_p1", "org_p1", "org_p2"].map((parentOrgId, i) => {
      const time = new Date(Date.UTC(2026, 0, 15, 12, i));
      const data = create(DelegatedRequestServedSchema, {
        parentOrgId,
        orgId: "org_child",
        tokenId: "tok_partner",
        method: "PATCH",
        path: "/api/v1alpha1/users/usr_1",
        status: 200 + i,
        requestId: `req_${i}`,
        time: timestampFromDate(time),
      });
      const envelope = {
        id: `ev-${i}`,
        type: EVENT_TYPES.delegatedRequestServed,
        source: "gateway",
        time: time.toISOString(),
        data: toJson(DelegatedRequestServedSchema, data),
      };
      return toBusMessage(envelope, parentOrgId);
    });
    await bus.publish(TOPICS.gateway, served);
    await eventually("the audit entries", async () => {
      const all = await platform(["audit", "list", "--org", "org_child", "--json"]);
      return all.json().length === 3 ? true : undefined;
    });
    const listed = await platform(["audit", "list", "--parent", "org_p1", "--json"]);
    expect(listed).toMatchObject({ code: 0, stderr: "" });
    expect(listed.json()).toEqual([
      {
        id: "ev-1",
        parentOrgId: "org_p1",
        orgId: "org_child",
        tokenId: "tok_partner",
        method: "PATCH",
        path: "/api/v1alpha1/users/usr_1",
        status: 201,
        requestId: "req_1",
        time: "2026-01-15T12:01:00.000Z",
      },
      expect.objectContaining({ id: "ev-0" }),
    ]);

    const table = await platform(["audit", "list", "--limit", "1"]);
    expect(table.stdout).toMatch(/^TIME\s+PARENT\s+ORG\s+METHOD\s+PATH\s+STATUS/);
    expect(table.stdout).toMatch(
      /2026-01-15T12:02:00.000Z\s+org_p2\s+org_child\s+PATCH\s+\/api\/v1alpha1\/users\/usr_1\s+202/,
    );
    expect(table.stdout.trim().split("\n")).toHaveLength(2);
    expect((await platform(["audit", "list", "--org", "org_nobody"])).stdout).toBe("(none)\n");

    for (const limit of ["0", "501", "ten"]) {
      const bad = await platform(["audit", "list", "--limit", limit]);
      expect(bad).toMatchObject({ code: 1, stdout: "" });
      expect(bad.stderr).toContain("--limit");
    }
    const help = await platform(["audit", "list", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--parent <orgId>");
  });

  it("answers --help and usage errors through commander", async () => {
    const help = await platform(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Examples:");
    const missing = await platform(["tokens", "create", "--scopes", "read"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("--org");
  });
});

describe("platform CLI without the admin plane", () => {
  const nowhere = { PLATFORM_ADMIN_URL: "http://127.0.0.1:1" };

  it("says which address it could not reach and how to start the platform", async () => {
    const r = await platform(["--admin-url", "http://127.0.0.1:1/", "tokens", "list"], { PLATFORM_ADMIN_URL: "" });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("http://127.0.0.1:1");
    expect(r.stderr).toContain("npm start");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("computes sandbox keys offline from the seed, noting that revocations are not reflected", async () => {
    const r = await platform(["sandbox", "keys", "--json"], nowhere);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/not reflected/);
    const keys = r.json();
    expect(keys).toHaveLength(8);
    expect(keys.find((k: { name: string }) => k.name === "acme-revoked").revokedAt).toBe("2025-02-01T09:00:00.000Z");
    expect(keys.find((k: { name: string }) => k.name === "acme-full").key).toBe(
      sandboxKeysOffline(SEED).find((k) => k.name === "acme-full")?.key,
    );
  });

  it("lists the sandbox fixtures by scenario for the seed, as a table or JSON", async () => {
    const r = await platform(["sandbox", "fixtures", "--json"], nowhere);
    expect(r).toMatchObject({ code: 0, stderr: "" });
    const fixtures = r.json() as { scenario: string; id: string; orgId: string; path: string; key: string }[];
    const by = new Map(fixtures.map((f) => [f.scenario, f]));
    for (const scenario of [
      "expired-transcript",
      "failed-bot",
      "meeting-with-chat",
      "revoked-child",
      "won-deal",
      "lost-deal",
      "disabled-schedule",
    ]) {
      expect(by.has(scenario), scenario).toBe(true);
    }
    expect(new Set(fixtures.map((f) => f.scenario)).size).toBe(fixtures.length);
    // Derived from SANDBOX_SEED, as the platform seeded with it derives them.
    expect(by.get("expired-transcript")).toMatchObject({
      id: sandboxMeetingId(SEED, "acme-archive-2025"),
      orgId: sandboxOrgId(SEED, "acme"),
      path: `/scheduled-meetings/${sandboxMeetingId(SEED, "acme-archive-2025")}/transcript`,
      key: "acme-full",
    });
    expect(by.get("revoked-child")).toMatchObject({
      id: sandboxOrgId(SEED, "hooli"),
      key: "northwind-partner",
      actingOn: sandboxOrgId(SEED, "hooli"),
    });
    const other = await platform(["sandbox", "fixtures", "--json"], { ...nowhere, SANDBOX_SEED: "another" });
    expect(other.json()[0].id).not.toBe(fixtures[0]?.id);

    const table = await platform(["sandbox", "fixtures"], nowhere);
    const lines = table.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^SCENARIO\s+ID\s+GET\s+KEY\s+WHAT IT SHOWS$/);
    expect(lines).toHaveLength(fixtures.length + 1);
    expect(table.stdout).toMatch(
      new RegExp(`failed-bot\\s+${by.get("failed-bot")?.id}\\s+/scheduled-meetings/\\{id\\}/bot\\s+acme-full`),
    );
  });

  it("has the same fixtures table in the README, for the default seed", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    expect(readme).toContain(fixturesMarkdown(sandboxFixtures("sandbox")));
  });
});
