import { PartnerService, UserService } from "@platform/contracts/identity";
import { hashApiKey, isApiKeyShape } from "@platform/kit/api-keys";
import { ManualClock } from "@platform/kit/clock";
import { ALL_SCOPES, PARTNER_SCOPE, READ_SCOPES } from "@platform/kit/scopes";
import { SANDBOX, sandboxKeysOffline, sandboxOrgId, sandboxUserId } from "@platform/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sandboxKeys, seedSandbox } from "../src/sandbox.js";
import { createTestIdentity, openTestDb, problemOf, SEED, type TestIdentity } from "./builders.js";

let t: TestIdentity;

beforeAll(async () => {
  t = await createTestIdentity();
  expect(await seedSandbox(t.db, t.clock, SEED)).toBe(true);
});
afterAll(() => t.close());

const key = (name: string) => sandboxKeysOffline(SEED).find((k) => k.name === name)!;
const resolve = (name: string) => t.gatewayClient.resolveApiKey({ keyHash: hashApiKey(key(name).key) });

describe("sandbox seeding", () => {
  it("is deterministic: the same seed gives the same ids and keys in another database", async () => {
    const other = await openTestDb();
    try {
      await seedSandbox(other.db, new ManualClock("2030-01-01T00:00:00Z"), SEED);
      expect(await sandboxKeys(other.db, SEED)).toEqual(await sandboxKeys(t.db, SEED));
      const ids = (q: typeof t.db) =>
        q.query("SELECT id FROM identity.users UNION ALL SELECT id FROM identity.organizations ORDER BY 1");
      expect(await ids(other.db)).toEqual(await ids(t.db));
      // Everything but the times of pending invitations, which follow the clock.
      const facts = (q: typeof t.db) =>
        q.query(`SELECT id, email, display_name, title, department, phone_number, role, active, invitation_status,
            last_login_at, two_factor_enabled, crm_user_id,
            CASE WHEN invitation_status = 'accepted' THEN created_at END AS joined
          FROM identity.users ORDER BY id`);
      expect(await facts(other.db)).toEqual(await facts(t.db));
    } finally {
      await other.pglite.close();
    }
    expect(sandboxKeysOffline("another-seed")[0]?.key).not.toBe(key("acme-full").key);
  });

  it("is idempotent: a second run writes nothing", async () => {
    const count = async () => (await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM identity.users"))[0]?.n;
    const before = await count();
    expect(await seedSandbox(t.db, t.clock, SEED)).toBe(false);
    expect(await count()).toBe(before);
  });

  it("gives Acme 10 seats with pending, expired and deactivated users", async () => {
    const acmeId = sandboxOrgId(SEED, "acme");
    const { entitlements } = await t.orgClient(acmeId).getEntitlements({});
    expect(entitlements?.seats).toMatchObject({ total: 10, used: 7, available: 3 });
    expect(entitlements?.licenseTier?.slug).toBe("professional");
    const { organization } = await t.orgClient(acmeId).getOrganization({ orgId: "" });
    expect(organization?.emailDomains).toEqual(["acme.example", "acme-corp.example"]);
    expect(organization?.administrator).toMatchObject({
      userId: sandboxUserId(SEED, "acme-owner"),
      displayName: "Avery Stone",
    });
    expect(organization?.sourceRefs?.crm?.orgId).toBeTruthy();
  });

  it("makes Northwind the parent of Globex and Initech, but no longer of Hooli", async () => {
    const northwind = sandboxOrgId(SEED, "northwind");
    const granted = async (child: string) =>
      (await t.gatewayClient.resolveDelegation({ parentOrgId: northwind, childOrgId: sandboxOrgId(SEED, child) }))
        .grantedScopes;
    expect(await granted("globex")).toEqual([
      "deals:read",
      "users:read",
      "organizations:read",
      "accounts:read",
      "contacts:read",
    ]);
    expect(await granted("initech")).toEqual(ALL_SCOPES.filter((s) => s !== PARTNER_SCOPE));
    expect(
      await problemOf(
        t.gatewayClient.resolveDelegation({ parentOrgId: northwind, childOrgId: sandboxOrgId(SEED, "hooli") }),
      ),
    ).toBe("cross-org-delegation-forbidden");
    expect(SANDBOX.organizations.find((o) => o.label === "northwind")?.partnerAdmin).toBe(true);
  });

  it("issues the documented keys", async () => {
    expect(sandboxKeysOffline(SEED).map((k) => k.name)).toEqual([
      "acme-full",
      "acme-readonly",
      "acme-noscopes",
      "acme-expired",
      "acme-revoked",
      "northwind-partner",
      "northwind-nodelegation",
      "umbrella-full",
    ]);
    for (const k of sandboxKeysOffline(SEED)) expect(isApiKeyShape(k.key)).toBe(true);
    expect((await resolve("acme-full")).scopes).not.toContain(PARTNER_SCOPE);
    expect((await resolve("acme-readonly")).scopes).toEqual(READ_SCOPES);
    expect((await resolve("acme-noscopes")).scopes).toEqual([]);
    expect((await resolve("acme-expired")).expireTime).toBeDefined();
    expect((await resolve("acme-revoked")).revokeTime).toBeDefined();
    expect((await resolve("northwind-partner")).scopes).toContain(PARTNER_SCOPE);
    expect((await resolve("northwind-nodelegation")).scopes).not.toContain(PARTNER_SCOPE);
    expect((await resolve("umbrella-full")).orgId).toBe(sandboxOrgId(SEED, "umbrella"));
    // What the CLI shows offline is what identity seeded (it validated the same scopes).
    const seeded = await sandboxKeys(t.db, SEED);
    expect(seeded.map((k) => [k.name, k.tokenId, k.scopes])).toEqual(
      sandboxKeysOffline(SEED).map((k) => [k.name, k.tokenId, k.scopes]),
    );
  });

  it("lists the keys with their state from the database, so a later revocation shows", async () => {
    const before = await t.adminClient.listSandboxKeys({});
    const full = before.keys.find((k) => k.name === "acme-full");
    expect(full).toMatchObject({ key: key("acme-full").key, orgName: "Acme Corp" });
    expect(full?.revokeTime).toBeUndefined();
    await t.adminClient.revokeToken({ tokenId: full?.tokenId ?? "" });
    const after = await t.adminClient.listSandboxKeys({});
    expect(after.keys.find((k) => k.name === "acme-full")?.revokeTime).toBeDefined();
    expect(sandboxKeysOffline(SEED).find((k) => k.name === "acme-full")?.revokedAt).toBeNull();
  });
});

describe("sandbox data", () => {
  const users = (label: string) =>
    t
      .caller(UserService, sandboxOrgId(SEED, label), { scopes: ["users:read"] })
      .listUsers({ active: "all", limit: 100 });

  it("gives Acme its contractual administrator, another Admin, pending, expired and deactivated users", async () => {
    const { users: acme } = await users("acme");
    const byId = new Map(acme.map((u) => [u.id, u]));
    const get = (label: string) => byId.get(sandboxUserId(SEED, label));
    expect(get("acme-owner")).toMatchObject({ role: "Admin", invitationStatus: "accepted", active: true });
    expect(get("acme-admin")).toMatchObject({ role: "Admin", invitationStatus: "accepted" });
    expect(get("acme-pending")?.invitationStatus).toBe("pending");
    expect(get("acme-expired")?.invitationStatus).toBe("expired");
    expect(get("acme-deactivated")?.active).toBe(false);
    expect(acme).toHaveLength(9);
  });

  it("fills in profiles: titles, departments, E.164 phones, sign-ins, 2FA and CRM ids", async () => {
    const client = t.caller(UserService, sandboxOrgId(SEED, "acme"), { scopes: ["users:read"] });
    const { user } = await client.getUser({ userId: sandboxUserId(SEED, "acme-owner") });
    expect(user).toMatchObject({
      title: "VP Revenue Operations",
      department: "Operations",
      twoFactorEnabled: true,
      crmUserId: "0058d00000AcmeA01",
    });
    expect(user?.lastLoginTime).toBeDefined();
    const pending = await client.getUser({ userId: sandboxUserId(SEED, "acme-pending") });
    expect(pending.user?.lastLoginTime).toBeUndefined();
    expect(pending.user?.invitedBy?.displayName).toBe("Avery Stone");
    for (const o of SANDBOX.organizations) {
      for (const u of o.users) {
        if (u.phoneNumber) expect(u.phoneNumber).toMatch(/^\+[1-9]\d{6,14}$/);
        expect(u.title).toBeTruthy();
        expect(u.department).toBeTruthy();
        expect(u.lastLoginAt === undefined).toBe(u.invitedDaysAgo !== undefined);
      }
    }
  });

  it("lists Northwind's children with Initech flagged for active issues", async () => {
    const { organizations } = await t
      .caller(PartnerService, sandboxOrgId(SEED, "northwind"), { scopes: [...ALL_SCOPES] })
      .listManagedOrganizations({ sort: "name" });
    expect(organizations.map((o) => [o.name, o.hasActiveIssues])).toEqual([
      ["Globex", false],
      ["Initech", true],
    ]);
    expect(organizations[1]?.seats).toMatchObject({ total: 15, used: 4, available: 11 });
  });
});
