import type { ListManagedOrganizationsRequest } from "@platform/contracts/identity";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  API,
  buildTestGateway,
  CHILD_ORG,
  expectProblem,
  get,
  ORG,
  PARTNER_ORG,
  PARTNER_SCOPES,
  SECOND_CHILD_ORG,
  type TestGateway,
} from "./harness.js";

const LIST = `${API}/partner/managed-organizations`;
let gw: TestGateway;
let partnerKey: string;
beforeEach(async () => {
  gw = await buildTestGateway();
  partnerKey = gw.identity.addToken({ orgId: PARTNER_ORG, scopes: [...PARTNER_SCOPES, "users:write"] });
});
afterEach(async () => {
  await gw.app.close();
});

const lastRequest = () => gw.identity.lastRequest<ListManagedOrganizationsRequest>("listManagedOrganizations");

describe("GET /partner/managed-organizations", () => {
  it("lists the active children with what the token can exercise on each", async () => {
    const res = await get(gw.app, LIST, partnerKey);
    expect(res.statusCode).toBe(200);
    expect(res.headers["x-request-id"]).toMatch(/\S/);
    expect(res.headers["platform-acting-on"]).toBeUndefined();
    expect(res.json()).toEqual({
      items: [
        {
          id: CHILD_ORG,
          name: "Child",
          primaryEmailDomain: "acme.example",
          industry: "Software",
          licenseTier: { slug: "professional", name: "Professional" },
          seats: { total: 25, used: 20, available: 5 },
          grantedScopes: ["organizations:read", "deals:read", "deals:write"],
          hasActiveIssues: false,
          relationshipCreatedAt: "2025-05-01T00:00:00.000Z",
          updatedAt: "2026-01-10T17:45:12.500Z",
        },
        {
          id: SECOND_CHILD_ORG,
          name: "Beta",
          primaryEmailDomain: "acme.example",
          industry: "Software",
          licenseTier: { slug: "starter", name: "Starter" },
          seats: { total: 5, used: 5, available: 0 },
          grantedScopes: ["users:read", "users:write"],
          hasActiveIssues: true,
          relationshipCreatedAt: "2025-09-01T00:00:00.000Z",
          updatedAt: "2026-01-10T17:45:12.500Z",
        },
      ],
      nextCursor: null,
    });
    expect(lastRequest()).toMatchObject({ cursor: "", limit: 25, sort: "-updatedAt", search: "", industry: "" });
    expect(lastRequest()?.hasActiveIssues).toBeUndefined();
    expect(gw.identity.contexts.at(-1)).toMatchObject({ orgId: PARTNER_ORG });
    expect(gw.identity.contexts.at(-1)?.parentOrgId).toBeUndefined();
  });

  it("sorts, pages and filters through identity", async () => {
    const first = await get(gw.app, `${LIST}?sort=-seats.total&limit=1`, partnerKey);
    expect(first.json().items.map((o: { id: string }) => o.id)).toEqual([CHILD_ORG]);
    const next = await get(gw.app, `${LIST}?sort=-seats.total&limit=1&cursor=${first.json().nextCursor}`, partnerKey);
    expect(next.json()).toEqual({ items: [expect.objectContaining({ id: SECOND_CHILD_ORG })], nextCursor: null });
    expect(lastRequest()).toMatchObject({ sort: "-seats.total", limit: 1 });

    const filtered = await get(
      gw.app,
      `${LIST}?search=bet&industry=Software&licenseTier=starter&hasActiveIssues=true`,
      partnerKey,
    );
    expect(filtered.json().items.map((o: { id: string }) => o.id)).toEqual([SECOND_CHILD_ORG]);
    expect(lastRequest()).toMatchObject({
      search: "bet",
      industry: "Software",
      licenseTier: "starter",
      hasActiveIssues: true,
    });
    await get(gw.app, `${LIST}?hasActiveIssues=false`, partnerKey);
    expect(lastRequest()?.hasActiveIssues).toBe(false);
  });

  it("answers 400 invalid-filter for a non-boolean hasActiveIssues and an unknown licenseTier", async () => {
    const calls = gw.identity.received.length;
    for (const value of ["yes", "1", "", "true&hasActiveIssues=false"]) {
      expectProblem(await get(gw.app, `${LIST}?hasActiveIssues=${value}`, partnerKey), "invalid-filter", {
        field: "hasActiveIssues",
      });
    }
    expect(gw.identity.received.length).toBe(calls);
    expectProblem(await get(gw.app, `${LIST}?licenseTier=gold`, partnerKey), "invalid-filter");
  });

  it("answers 400 invalid-sort-field and invalid-cursor", async () => {
    expectProblem(await get(gw.app, `${LIST}?sort=seats.used`, partnerKey), "invalid-sort-field", {
      field: "seats.used",
      allowedSortFields: ["updatedAt", "createdAt", "name", "seats.total"],
    });
    expectProblem(await get(gw.app, `${LIST}?cursor=abc`, partnerKey), "invalid-cursor");
  });

  it("refuses X-Platform-Acting-On here, and tokens without partner:act-as-child", async () => {
    const acting = await get(gw.app, LIST, partnerKey, { "x-platform-acting-on": CHILD_ORG });
    expectProblem(acting, "invalid-acting-on-org");
    expect(acting.headers["platform-acting-on"]).toBeUndefined();
    const plain = gw.identity.addToken({ orgId: ORG, scopes: ["organizations:read", "users:read"] });
    expectProblem(await get(gw.app, LIST, plain), "insufficient-scope", { requiredScope: "partner:act-as-child" });
    expect(lastRequest()).toBeUndefined();
  });
});
