import type { UpdateOrganizationRequest } from "@platform/contracts/identity";
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
  request,
  type TestGateway,
} from "./harness.js";

let gw: TestGateway;
let key: string;
beforeEach(async () => {
  gw = await buildTestGateway();
  key = gw.identity.addToken({ orgId: ORG, scopes: ["organizations:read", "organizations:write"] });
});
afterEach(async () => {
  await gw.app.close();
});

const URL = `${API}/organizations/${ORG}`;

/** A PATCH of the test's key with the organization's current ETag unless told otherwise. */
function patch(body: unknown, headers: Record<string, string | undefined> = {}, apiKey = key, url = URL) {
  return request(gw.app, "PATCH", url, apiKey, body, { "if-match": 'W/"7"', ...headers });
}

describe("PATCH /organizations/{orgId}", () => {
  it("merges the present fields and answers the Organization with a fresh ETag", async () => {
    const res = await patch({ name: "Acme Corp", employeeCount: 150, primaryEmailDomain: "acme.test" });
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe('W/"8"');
    expect(res.headers["x-request-id"]).toMatch(/\S/);
    expect(res.json()).toMatchObject({
      id: ORG,
      name: "Acme Corp",
      employeeCount: 150,
      primaryEmailDomain: "acme.test",
      industry: "Software",
      logoUrl: null,
      sourceRefs: { crm: { orgId: "0015g00000XyZ" } },
      updatedAt: "2026-01-15T12:00:00.000Z",
    });
    const req = gw.identity.lastRequest<UpdateOrganizationRequest>("updateOrganization")!;
    expect(req).toMatchObject({ orgId: ORG, expectedVersion: 7n, name: "Acme Corp", employeeCount: 150 });
    expect(req.industry).toBeUndefined();

    const read = await get(gw.app, `${API}/organizations/me`, key);
    expect(read.headers.etag).toBe('W/"8"');
    expect(read.json()).toEqual(res.json());
  });

  it("accepts an empty object and the strong form of the ETag", async () => {
    const res = await patch({}, { "if-match": '"7"' });
    expect(res.statusCode).toBe(200);
    expect(gw.identity.lastRequest<UpdateOrganizationRequest>("updateOrganization")).toMatchObject({
      expectedVersion: 7n,
    });
  });

  it("answers 400 invalid-field for fields that cannot be written, unknown fields and bad values", async () => {
    for (const field of ["administrator", "sourceRefs", "emailDomains", "logoUrl", "color"]) {
      const body = expectProblem(await patch({ name: "Acme", [field]: {} }), "invalid-field", { field });
      expect(body.detail).toContain(field);
    }
    const admin = expectProblem(await patch({ administrator: { userId: "usr_x" } }), "invalid-field");
    expect(admin.detail).toMatch(/cannot be changed/);
    for (const [field, value] of [
      ["name", ""],
      ["name", "x".repeat(201)],
      ["employeeCount", 0],
      ["employeeCount", 1_000_001],
      ["employeeCount", 12.5],
      ["employeeCount", "12"],
      ["industry", null],
    ] as const) {
      expectProblem(await patch({ [field]: value }), "invalid-field", { field });
    }
    expect((await patch({ name: "x".repeat(200), employeeCount: 1_000_000 })).statusCode).toBe(200);
  });

  it("answers 412 precondition-failed without a usable If-Match, and on a stale version", async () => {
    const missing = expectProblem(await patch({ name: "X" }, { "if-match": undefined }), "precondition-failed");
    expect(missing.detail).toMatch(/requires an If-Match/);
    const garbled = expectProblem(await patch({ name: "X" }, { "if-match": "seven" }), "precondition-failed");
    expect(garbled.detail).toMatch(/If-Match must be/);
    expect(gw.identity.lastRequest("updateOrganization")).toBeUndefined();
    const stale = await patch({ name: "X" }, { "if-match": 'W/"6"' });
    expectProblem(stale, "precondition-failed");
    expect(stale.headers.etag).toBeUndefined();
  });

  it("answers 403 write-scope-required to a read-only token, insufficient-scope to others", async () => {
    const reader = gw.identity.addToken({ orgId: ORG, scopes: ["organizations:read"] });
    expectProblem(await patch({ name: "X" }, {}, reader), "write-scope-required", {
      requiredScope: "organizations:write",
    });
    const stranger = gw.identity.addToken({ orgId: ORG, scopes: ["users:read"] });
    expectProblem(await patch({ name: "X" }, {}, stranger), "insufficient-scope", {
      requiredScope: "organizations:write",
    });
  });

  it("answers 404 organization-not-found for another organization", async () => {
    expectProblem(await patch({ name: "X" }, {}, key, `${API}/organizations/${CHILD_ORG}`), "organization-not-found");
    expectProblem(await patch({ name: "X" }, {}, key, `${API}/organizations/acme`), "invalid-resource-id");
  });

  it("passes email-domain-not-verified on", async () => {
    expectProblem(await patch({ primaryEmailDomain: "evil.example" }), "email-domain-not-verified");
  });

  it("requires an Idempotency-Key; a replay keeps the original 200 and says so", async () => {
    expectProblem(await patch({ name: "X" }, { "idempotency-key": undefined }), "idempotency-key-required");
    const headers = { "idempotency-key": "rename-1" };
    const first = await patch({ name: "Acme Two" }, headers);
    const again = await patch({ name: "Acme Two" }, headers);
    expect(first.headers["x-idempotent-replay"]).toBeUndefined();
    expect(again.statusCode).toBe(200);
    expect(again.headers["x-idempotent-replay"]).toBe("true");
    expect(again.headers.etag).toBe('W/"8"');
    expect(again.json()).toEqual(first.json());
    expectProblem(await patch({ name: "Acme Three" }, headers), "idempotency-key-conflict");
  });

  it("answers delegation-scope-insufficient when the child did not grant organizations:write", async () => {
    const partner = gw.identity.addToken({ orgId: PARTNER_ORG, scopes: [...PARTNER_SCOPES, "organizations:write"] });
    expectProblem(
      await patch({ name: "X" }, { "x-platform-acting-on": CHILD_ORG }, partner, `${API}/organizations/${CHILD_ORG}`),
      "delegation-scope-insufficient",
      { requiredScope: "organizations:write" },
    );
  });
});
