import { Code, ConnectError } from "@connectrpc/connect";
import { buildInfo } from "@platform/kit/build-info";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  API,
  buildTestGateway,
  CHILD_ORG,
  expectProblem,
  get,
  ORG,
  PARTNER_ORG,
  STRANGER_ORG,
  type TestGateway,
} from "./harness.js";

let gw: TestGateway;
let key: string;
beforeEach(async () => {
  gw = await buildTestGateway();
  key = gw.identity.addToken({ orgId: ORG, scopes: ["organizations:read"] });
});
afterEach(async () => {
  await gw.app.close();
});

const ACME = {
  id: ORG,
  name: "Acme",
  primaryEmailDomain: "acme.example",
  emailDomains: ["acme.example", "acme.test"],
  administrator: { userId: "usr_1yzefm0450baq05dn6dz18k6", displayName: "Ada Admin" },
  industry: "Software",
  employeeCount: 120,
  logoUrl: null,
  sourceRefs: { crm: { orgId: "0015g00000XyZ" } },
  createdAt: "2025-03-01T09:30:00.000Z",
  updatedAt: "2026-01-10T17:45:12.500Z",
};

describe("GET /organizations/me and /organizations/{orgId}", () => {
  it("returns the spec's Organization with an ETag", async () => {
    const res = await get(gw.app, `${API}/organizations/me`, key);
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(res.headers.etag).toBe('W/"7"');
    expect(res.json()).toEqual({ ...ACME, administrator: res.json().administrator });
    expect(res.json().administrator).toEqual({ userId: expect.stringMatching(/^usr_/), displayName: "Ada Admin" });

    const byId = await get(gw.app, `${API}/organizations/${ORG}`, key);
    expect(byId.statusCode).toBe(200);
    expect(byId.json()).toEqual(res.json());
    expect(byId.headers.etag).toBe('W/"7"');
  });

  it("renders an unset CRM reference as {} and a logo when there is one", async () => {
    const acme = gw.identity.orgs.get(ORG)!;
    gw.identity.orgs.set(ORG, {
      ...acme,
      sourceRefs: undefined,
      logoUrl: "https://cdn.example/acme.png",
      version: 12n,
    });
    const res = await get(gw.app, `${API}/organizations/me`, key);
    expect(res.json()).toMatchObject({ sourceRefs: {}, logoUrl: "https://cdn.example/acme.png" });
    expect(res.headers.etag).toBe('W/"12"');
  });

  it("answers 404 organization-not-found for any other organization, existing or not", async () => {
    const other = await get(gw.app, `${API}/organizations/${CHILD_ORG}`, key);
    const unknown = await get(gw.app, `${API}/organizations/${STRANGER_ORG}`, key);
    const a = expectProblem(other, "organization-not-found");
    const b = expectProblem(unknown, "organization-not-found");
    expect({ ...a, requestId: null }).toEqual({ ...b, requestId: null });
    expect(other.headers.etag).toBeUndefined();
  });

  it("answers 400 invalid-resource-id for an id that is not an organization id", async () => {
    const res = await get(gw.app, `${API}/organizations/usr_1yzefm0450baq05dn6dz18k6`, key);
    expectProblem(res, "invalid-resource-id");
  });

  it("answers 403 insufficient-scope without organizations:read", async () => {
    const other = gw.identity.addToken({ orgId: ORG, scopes: ["deals:read"] });
    expectProblem(await get(gw.app, `${API}/organizations/me`, other), "insufficient-scope", {
      requiredScope: "organizations:read",
    });
  });
});

describe("GET /organizations/me/entitlements", () => {
  it("returns the spec's Entitlements, privately cacheable for 60 s", async () => {
    const res = await get(gw.app, `${API}/organizations/me/entitlements`, key);
    expect(res.statusCode).toBe(200);
    expect(res.headers["cache-control"]).toBe("private, max-age=60");
    expect(res.json()).toEqual({
      orgId: ORG,
      features: {
        smartScheduling: true,
        teamCalendarScheduling: false,
        replyTracking: false,
        emailBlast: true,
        dealIntelApp: false,
        meetingAi: false,
      },
      seats: { total: 25, used: 20, available: 5 },
      licenseTier: { slug: "professional", name: "Professional" },
      asOf: "2026-01-15T00:00:00.000Z",
    });
  });

  it("is the child's when delegating", async () => {
    const partner = gw.identity.addToken({
      orgId: PARTNER_ORG,
      scopes: ["partner:act-as-child", "organizations:read"],
    });
    const res = await get(gw.app, `${API}/organizations/me/entitlements`, partner, {
      "x-platform-acting-on": CHILD_ORG,
    });
    expect(res.json().orgId).toBe(CHILD_ORG);
    expect(res.headers["platform-acting-on"]).toBe(CHILD_ORG);
    expect(res.headers["cache-control"]).toBe("private, max-age=60");
  });
});

describe("health", () => {
  it("is live and ready without a key", async () => {
    const live = await get(gw.app, "/healthz");
    expect(live.statusCode).toBe(200);
    expect(live.json()).toEqual({ status: "ok", version: buildInfo().version, commit: buildInfo().commit });
    expect(live.json().commit).toMatch(/^([0-9a-f]{40}|unknown)$/);
    const ready = await get(gw.app, "/readyz");
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: "ready" });
  });

  it("is not ready while identity does not answer", async () => {
    gw.identity.failNext = new ConnectError("connection refused", Code.Unavailable);
    expectProblem(await get(gw.app, "/readyz"), "service-unavailable");
    expect((await get(gw.app, "/healthz")).statusCode).toBe(200);
  });
});
