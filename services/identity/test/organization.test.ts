import { timestampDate } from "@bufbuild/protobuf/wkt";
import { OrganizationService } from "@platform/contracts/identity";
import { EVENT_TYPES } from "@platform/kit/events";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { OrganizationRecord } from "../src/domain/model.js";
import {
  aUser,
  type CallerOptions,
  createTestIdentity,
  givenOrganization,
  outboxRows,
  problemDetailOf,
  problemOf,
  type TestIdentity,
  withHeaders,
} from "./builders.js";

const DAY_MS = 24 * 60 * 60 * 1000;

let t: TestIdentity;
let acme: OrganizationRecord;
let other: OrganizationRecord;

beforeAll(async () => {
  t = await createTestIdentity();
});
afterAll(() => t.close());
beforeEach(async () => {
  await t.reset();
  const now = t.clock.now().getTime();
  acme = await givenOrganization(
    t.db,
    {
      name: "Acme",
      emailDomains: ["acme.example", "acme-corp.example"],
      primaryEmailDomain: "acme.example",
      crmOrgId: "00D-acme",
      logoUrl: "https://acme.example/logo.png",
      licenseTier: "professional",
      seatTotal: 6,
      version: 3,
    },
    (orgId) => [
      aUser(orgId, { role: "Admin" }),
      aUser(orgId),
      aUser(orgId, { invitationStatus: "pending", invitedAt: new Date(now - 2 * DAY_MS) }),
      // At exactly 14 days an invitation is still pending; one millisecond later it is expired.
      aUser(orgId, { invitationStatus: "pending", invitedAt: new Date(now - 14 * DAY_MS) }),
      aUser(orgId, { invitationStatus: "pending", invitedAt: new Date(now - 14 * DAY_MS - 1) }),
      aUser(orgId, { active: false }),
    ],
  );
  other = await givenOrganization(t.db, { name: "Other" });
});

describe("GetOrganization", () => {
  it("returns the caller's organization for an empty id and for its own id", async () => {
    const client = t.orgClient(acme.id);
    const me = await client.getOrganization({ orgId: "" });
    const byId = await client.getOrganization({ orgId: acme.id });
    expect(byId).toEqual(me);
    const org = me.organization;
    expect(org?.id).toBe(acme.id);
    expect(org?.name).toBe("Acme");
    expect(org?.emailDomains).toEqual(["acme.example", "acme-corp.example"]);
    expect(org?.administrator).toMatchObject({ userId: acme.administratorUserId, displayName: "Olive Owner" });
    expect(org?.logoUrl).toBe("https://acme.example/logo.png");
    expect(org?.sourceRefs?.crm?.orgId).toBe("00D-acme");
    expect(org?.version).toBe(3n);
    expect(org?.createTime && timestampDate(org.createTime)).toEqual(acme.createdAt);
  });

  it("leaves unset fields unset", async () => {
    const { organization } = await t.orgClient(other.id).getOrganization({ orgId: "" });
    expect(organization?.logoUrl).toBeUndefined();
    expect(organization?.sourceRefs?.crm).toBeUndefined();
  });

  it("hides another organization behind organization-not-found", async () => {
    expect(await problemOf(t.orgClient(acme.id).getOrganization({ orgId: other.id }))).toBe("organization-not-found");
    expect(await problemOf(t.orgClient(acme.id).getOrganization({ orgId: "org_0000000000000000000000zz" }))).toBe(
      "organization-not-found",
    );
  });

  it("refuses a call that did not come through the gateway", async () => {
    const unsigned = t.apiClient(OrganizationService, undefined);
    expect(await problemOf(unsigned.getOrganization({ orgId: "" }))).toBe("missing-trust-header");
    const asGateway = t.apiClient(OrganizationService, { principal: "gateway", requestId: "req_1" });
    expect(await problemOf(asGateway.getOrganization({ orgId: "" }))).toBe("missing-trust-header");
  });
});

describe("GetEntitlements", () => {
  it("counts active users and pending invitations, not expired or deactivated ones", async () => {
    const { entitlements } = await t.orgClient(acme.id).getEntitlements({});
    // Administrator + Admin + User + two pending = 5 of 6.
    expect(entitlements?.seats).toMatchObject({ total: 6, used: 5, available: 1 });
    expect(entitlements?.licenseTier).toMatchObject({ slug: "professional", name: "Professional" });
    expect(entitlements?.features).toMatchObject({ smartScheduling: true, meetingAi: false });
    expect(entitlements?.asOf && timestampDate(entitlements.asOf)).toEqual(acme.licenseAsOf);
    expect(entitlements?.orgId).toBe(acme.id);
  });

  it("frees the seat of an invitation once it expires", async () => {
    t.clock.advance(1);
    const { entitlements } = await t.orgClient(acme.id).getEntitlements({});
    expect(entitlements?.seats).toMatchObject({ used: 4, available: 2 });
  });

  it("is the acting org's own snapshot", async () => {
    const { entitlements } = await t.orgClient(other.id).getEntitlements({});
    expect(entitlements?.orgId).toBe(other.id);
    expect(entitlements?.seats).toMatchObject({ total: 5, used: 1, available: 4 });
  });
});

describe("UpdateOrganization", () => {
  const writer = (orgId: string, opts: CallerOptions = {}) =>
    t.caller(OrganizationService, orgId, { scopes: ["organizations:read", "organizations:write"], ...opts });
  const update = (fields: Record<string, unknown>, opts: CallerOptions = {}, expectedVersion = 3n) =>
    writer(acme.id, opts).updateOrganization({ orgId: acme.id, expectedVersion, ...fields });

  it("merges only the present fields, bumps the version and the update time, and announces the change", async () => {
    t.clock.advance(60_000);
    const { organization } = await update({ name: "  Acme Corporation ", employeeCount: 1300 });
    expect(organization).toMatchObject({
      name: "Acme Corporation",
      employeeCount: 1300,
      industry: "Testing",
      primaryEmailDomain: "acme.example",
      version: 4n,
    });
    expect(organization?.updateTime && timestampDate(organization.updateTime)).toEqual(t.clock.now());
    expect(organization?.administrator?.displayName).toBe("Olive Owner");
    expect((await t.orgClient(acme.id).getOrganization({ orgId: "" })).organization).toEqual(organization);
    expect(await outboxRows(t.db)).toEqual([
      {
        type: EVENT_TYPES.organizationUpdated,
        key: acme.id,
        subject: acme.id,
        data: { orgId: acme.id, version: "4", changedFields: ["name", "employeeCount"] },
      },
    ]);
    expect(t.commits()).toBe(1);
  });

  it("is a mutation even when nothing differs: new version, same values", async () => {
    const { organization } = await update({ name: "Acme" });
    expect(organization?.version).toBe(4n);
    const again = await update({}, {}, 4n);
    expect(again.organization?.version).toBe(5n);
    expect((await outboxRows(t.db)).map((e) => e.data)).toEqual([
      { orgId: acme.id, version: "4" },
      { orgId: acme.id, version: "5" },
    ]);
  });

  it("switches the primary domain among the verified ones, in their verified spelling", async () => {
    const { organization } = await update({ primaryEmailDomain: "ACME-Corp.Example" });
    expect(organization?.primaryEmailDomain).toBe("acme-corp.example");
    expect(await problemOf(update({ primaryEmailDomain: "evil.example" }, {}, 4n))).toBe("email-domain-not-verified");
  });

  it("rejects invalid values naming the field, writing nothing", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: "" }, "name"],
      [{ name: "   " }, "name"],
      [{ name: "x".repeat(201) }, "name"],
      [{ employeeCount: 0 }, "employeeCount"],
      [{ employeeCount: 1_000_001 }, "employeeCount"],
      [{ industry: "y".repeat(201) }, "industry"],
    ];
    for (const [fields, field] of cases) {
      const p = await problemDetailOf(update(fields));
      expect(p).toMatchObject({ name: "invalid-field", extensions: { field } });
      expect(p.detail).toContain(field);
    }
    const edges = await update({ name: "x".repeat(200), employeeCount: 1_000_000 });
    expect(edges.organization?.employeeCount).toBe(1_000_000);
    expect((await update({ employeeCount: 1 }, {}, 4n)).organization?.employeeCount).toBe(1);
    expect(await outboxRows(t.db)).toHaveLength(2);
  });

  it("answers precondition-failed for a stale version", async () => {
    expect(await problemOf(update({ name: "New" }, {}, 2n))).toBe("precondition-failed");
    expect(await problemOf(update({ name: "New" }, {}, 0n))).toBe("precondition-failed");
    expect((await t.orgClient(acme.id).getOrganization({ orgId: "" })).organization?.version).toBe(3n);
  });

  it("answers organization-not-found for another organization and an unknown one alike", async () => {
    const foreign = await problemDetailOf(
      writer(acme.id).updateOrganization({ orgId: other.id, expectedVersion: 1n, name: "Mine" }),
    );
    const unknown = await problemDetailOf(
      writer(acme.id).updateOrganization({ orgId: "org_0000000000000000000000zz", expectedVersion: 1n, name: "Mine" }),
    );
    expect(foreign.name).toBe("organization-not-found");
    expect(unknown.name).toBe("organization-not-found");
    expect(foreign.extensions).toEqual(unknown.extensions);
    expect((await t.orgClient(other.id).getOrganization({ orgId: "" })).organization?.name).toBe("Other");
  });

  it("replays a repeated Idempotency-Key and refuses it for another body", async () => {
    const key = { idempotencyKey: "rename-1" };
    const first = await withHeaders((o) =>
      writer(acme.id, key).updateOrganization({ orgId: acme.id, expectedVersion: 3n, name: "Renamed" }, o),
    );
    expect(first.headers.get("x-idempotent-replay")).toBeNull();
    t.clock.advance(1000);
    const replay = await withHeaders((o) =>
      writer(acme.id, key).updateOrganization({ orgId: acme.id, expectedVersion: 3n, name: "Renamed" }, o),
    );
    expect(replay.headers.get("x-idempotent-replay")).toBe("true");
    expect(replay.response).toEqual(first.response);
    expect(await outboxRows(t.db)).toHaveLength(1);
    expect(await problemOf(update({ name: "Other name" }, key))).toBe("idempotency-key-conflict");
    expect(await problemOf(update({ name: "Keyless" }, { idempotencyKey: "" }))).toBe("idempotency-key-required");
  });

  it("frees the key of a failed write, so the corrected retry runs", async () => {
    const key = { idempotencyKey: "retry-1" };
    expect(await problemOf(update({ name: "Retry" }, key, 9n))).toBe("precondition-failed");
    expect((await update({ name: "Retry" }, { idempotencyKey: "retry-1" })).organization?.name).toBe("Retry");
  });
});
