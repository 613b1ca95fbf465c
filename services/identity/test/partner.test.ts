import { timestampDate } from "@bufbuild/protobuf/wkt";
import { type ManagedOrganization, PartnerService } from "@platform/contracts/identity";
import { ALL_SCOPES } from "@platform/kit/scopes";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { OrganizationRecord } from "../src/domain/model.js";
import { pgStore } from "../src/store/index.js";
import {
  aUser,
  createTestIdentity,
  givenOrganization,
  problemDetailOf,
  problemOf,
  type TestIdentity,
} from "./builders.js";

const DAY_MS = 24 * 60 * 60 * 1000;
const at = (iso: string) => new Date(iso);
const PARTNER_TOKEN_SCOPES = ["partner:act-as-child", "users:read", "organizations:read", "deals:write"];

let t: TestIdentity;
let partner: OrganizationRecord;
let children: Record<"alpha" | "beta" | "gamma" | "delta", OrganizationRecord>;

const list = (req: Record<string, unknown> = {}, scopes = PARTNER_TOKEN_SCOPES, orgId = partner.id) =>
  t.caller(PartnerService, orgId, { scopes }).listManagedOrganizations(req);

async function grant(parent: OrganizationRecord, child: OrganizationRecord, scopes: string[], when: string) {
  await pgStore(t.db).tx((w) => w.upsertRelationship(parent.id, child.id, scopes as never, at(when)));
}

beforeAll(async () => {
  t = await createTestIdentity();
});
afterAll(() => t.close());
beforeEach(async () => {
  await t.reset();
  const now = t.clock.now().getTime();
  partner = await givenOrganization(t.db, { name: "Partner", partnerAdmin: true });
  const child = (overrides: Partial<OrganizationRecord>, extra = 0) =>
    givenOrganization(t.db, overrides, (orgId) =>
      Array.from({ length: extra }, (_, i) =>
        // One accepted user, then alternately a pending and an expired invitation.
        i === 0
          ? aUser(orgId)
          : aUser(orgId, { invitationStatus: "pending", invitedAt: new Date(now - (i % 2 ? 1 : 30) * DAY_MS) }),
      ),
    );
  children = {
    alpha: await child(
      {
        name: "Alpha Logistics",
        industry: "Logistics",
        licenseTier: "starter",
        seatTotal: 5,
        updatedAt: at("2025-09-01T00:00:00Z"),
      },
      3,
    ),
    beta: await child({
      name: "beta Software",
      industry: "Software",
      licenseTier: "enterprise",
      seatTotal: 40,
      hasActiveIssues: true,
      updatedAt: at("2025-07-01T00:00:00Z"),
    }),
    gamma: await child({
      name: "Gamma Labs",
      industry: "Software",
      licenseTier: "professional",
      seatTotal: 12,
      updatedAt: at("2025-05-01T00:00:00Z"),
    }),
    delta: await child({ name: "Delta", industry: "Retail", licenseTier: "free", seatTotal: 2 }),
  };
  await grant(partner, children.alpha, ["users:read", "deals:read", "organizations:read"], "2025-01-01T00:00:00Z");
  await grant(partner, children.beta, ["deals:write", "users:write"], "2025-02-01T00:00:00Z");
  // The relationship changed after the child did: its time is the later one.
  await grant(partner, children.gamma, [], "2025-08-01T00:00:00Z");
  await grant(partner, children.delta, ["users:read"], "2025-03-01T00:00:00Z");
  await pgStore(t.db).tx((w) => w.revokeRelationship(partner.id, children.delta.id, at("2025-04-01T00:00:00Z")));
  const rival = await givenOrganization(t.db, { name: "Rival", partnerAdmin: true });
  const stranger = await givenOrganization(t.db, { name: "Stranger child" });
  await grant(rival, stranger, ["users:read"], "2025-01-01T00:00:00Z");
});

const names = (orgs: ManagedOrganization[]) => orgs.map((o) => o.name);

async function listAll(req: Record<string, unknown>, limit: number): Promise<ManagedOrganization[]> {
  const out: ManagedOrganization[] = [];
  let cursor = "";
  for (let page = 0; page < 10; page++) {
    const res = await list({ ...req, limit, cursor });
    out.push(...res.organizations);
    if (!res.nextCursor) return out;
    cursor = res.nextCursor;
  }
  throw new Error("no last page");
}

describe("ListManagedOrganizations", () => {
  it("lists the caller's active children, most recently changed first", async () => {
    const { organizations, nextCursor } = await list();
    expect(names(organizations)).toEqual(["Alpha Logistics", "Gamma Labs", "beta Software"]);
    expect(nextCursor).toBe("");
    const [alpha, gamma] = organizations;
    expect(alpha).toMatchObject({
      id: children.alpha.id,
      primaryEmailDomain: "test.example",
      industry: "Logistics",
      licenseTier: { slug: "starter", name: "Starter" },
      // The accepted user, the administrator and the pending invitation; not the expired one.
      seats: { total: 5, used: 3, available: 2 },
      hasActiveIssues: false,
    });
    expect(alpha?.relationshipCreateTime && timestampDate(alpha.relationshipCreateTime)).toEqual(
      at("2025-01-01T00:00:00Z"),
    );
    expect(alpha?.updateTime && timestampDate(alpha.updateTime)).toEqual(at("2025-09-01T00:00:00Z"));
    expect(gamma?.updateTime && timestampDate(gamma.updateTime)).toEqual(at("2025-08-01T00:00:00Z"));
  });

  it("grants what the token holds and the child granted, in the spec's order", async () => {
    const { organizations } = await list({ sort: "name" });
    expect(organizations.map((o) => o.grantedScopes)).toEqual([
      ["users:read", "organizations:read"],
      ["deals:write"],
      [],
    ]);
    const every = await list({ sort: "name" }, [...ALL_SCOPES]);
    expect(every.organizations[0]?.grantedScopes).toEqual(["deals:read", "users:read", "organizations:read"]);
  });

  it.each([
    ["name", ["Alpha Logistics", "beta Software", "Gamma Labs"]],
    ["-name", ["Gamma Labs", "beta Software", "Alpha Logistics"]],
    ["createdAt", ["Alpha Logistics", "beta Software", "Gamma Labs"]],
    ["-createdAt", ["Gamma Labs", "beta Software", "Alpha Logistics"]],
    ["seats.total", ["Alpha Logistics", "Gamma Labs", "beta Software"]],
    ["-seats.total", ["beta Software", "Gamma Labs", "Alpha Logistics"]],
    ["updatedAt", ["beta Software", "Gamma Labs", "Alpha Logistics"]],
  ])("sorts by %s and pages with keyset cursors", async (sort, expected) => {
    expect(names((await list({ sort })).organizations)).toEqual(expected);
    expect(names(await listAll({ sort }, 1))).toEqual(expected);
    expect(names(await listAll({ sort }, 2))).toEqual(expected);
  });

  it("filters by name, industry, license tier and active issues", async () => {
    const filtered = async (req: Record<string, unknown>) =>
      names((await list({ sort: "name", ...req })).organizations);
    expect(await filtered({ search: "LAB" })).toEqual(["Gamma Labs"]);
    expect(await filtered({ search: "a" })).toEqual(["Alpha Logistics", "beta Software", "Gamma Labs"]);
    expect(await filtered({ industry: "Software" })).toEqual(["beta Software", "Gamma Labs"]);
    expect(await filtered({ industry: "software" })).toEqual([]);
    expect(await filtered({ licenseTier: "professional" })).toEqual(["Gamma Labs"]);
    expect(await filtered({ hasActiveIssues: true })).toEqual(["beta Software"]);
    expect(await filtered({ hasActiveIssues: false })).toEqual(["Alpha Logistics", "Gamma Labs"]);
  });

  it("answers invalid-filter for a license tier outside the spec's list", async () => {
    expect(await problemOf(list({ licenseTier: "free" }))).toBe("invalid-filter");
    expect(await problemOf(list({ licenseTier: "Enterprise" }))).toBe("invalid-filter");
  });

  it("refuses unknown sort fields and cursors of another sort", async () => {
    expect(await problemDetailOf(list({ sort: "seats.used" }))).toMatchObject({
      name: "invalid-sort-field",
      extensions: { field: "seats.used", allowedSortFields: ["updatedAt", "createdAt", "name", "seats.total"] },
    });
    const { nextCursor } = await list({ sort: "name", limit: 1 });
    expect(await problemOf(list({ sort: "-name", cursor: nextCursor }))).toBe("invalid-cursor");
  });

  it("is empty for an organization without children", async () => {
    expect((await list({}, PARTNER_TOKEN_SCOPES, children.alpha.id)).organizations).toEqual([]);
  });
});
