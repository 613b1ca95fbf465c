import { timestampDate } from "@bufbuild/protobuf/wkt";
import { OrganizationService } from "@platform/contracts/identity";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { OrganizationRecord } from "../src/domain/model.js";
import { aUser, createTestIdentity, givenOrganization, problemOf, type TestIdentity } from "./builders.js";

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
