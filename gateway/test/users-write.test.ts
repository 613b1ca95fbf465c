import type { UpdateUserRequest } from "@platform/contracts/identity";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ADA,
  API,
  BEN,
  buildTestGateway,
  CHILD_ORG,
  DAN,
  expectProblem,
  ORG,
  PARTNER_ORG,
  PARTNER_SCOPES,
  request,
  SECOND_CHILD_ORG,
  type TestGateway,
} from "./harness.js";
import { DETAIL_FIELDS } from "./user-views.js";

let gw: TestGateway;
let key: string;
beforeEach(async () => {
  gw = await buildTestGateway();
  key = gw.identity.addToken({ orgId: ORG, scopes: ["users:read", "users:write"] });
});
afterEach(async () => {
  await gw.app.close();
});

/** A write of the test's key to `${API}${url}`; see harness.request. */
function write(
  method: "POST" | "PATCH",
  url: string,
  body: unknown,
  headers: Record<string, string | undefined> = {},
  apiKey = key,
) {
  return request(gw.app, method, `${API}${url}`, apiKey, body, headers);
}

describe("POST /users", () => {
  const invite = { email: "Eve@Acme.example", role: "User", firstName: "Eve", department: "Sales" };

  it("invites: 201 with the detail view, pending, invitedAt now, and an ETag", async () => {
    const res = await write("POST", "/users", invite);
    expect(res.statusCode).toBe(201);
    expect(res.headers.etag).toBe('W/"1"');
    expect(res.headers["x-idempotent-replay"]).toBeUndefined();
    const user = res.json();
    expect(Object.keys(user).sort()).toEqual(DETAIL_FIELDS);
    expect(user).toMatchObject({
      id: expect.stringMatching(/^usr_/),
      orgId: ORG,
      email: "eve@acme.example",
      firstName: "Eve",
      lastName: null,
      title: null,
      department: "Sales",
      role: "User",
      active: true,
      invitationStatus: "pending",
      invitedBy: { userId: null, displayName: "Acme API" },
      invitedAt: "2026-01-15T12:00:00.000Z",
      lastLoginAt: null,
    });
    expect(gw.identity.lastRequest("inviteUser")).toMatchObject({
      email: "Eve@Acme.example",
      role: "User",
      firstName: "Eve",
      department: "Sales",
    });
  });

  it("replays the same key and body with the original 201 and X-Idempotent-Replay: true", async () => {
    const headers = { "idempotency-key": "invite-eve" };
    const first = await write("POST", "/users", invite, headers);
    const again = await write("POST", "/users", invite, headers);
    expect(again.statusCode).toBe(201);
    expect(again.headers["x-idempotent-replay"]).toBe("true");
    expect(again.json()).toEqual(first.json());
    expect(again.headers.etag).toBe(first.headers.etag);
    expectProblem(await write("POST", "/users", { ...invite, role: "Admin" }, headers), "idempotency-key-conflict");
  });

  it("answers 400 invalid-field for a missing email or role and for unknown fields", async () => {
    expectProblem(await write("POST", "/users", { role: "User" }), "invalid-field", { field: "email" });
    expectProblem(await write("POST", "/users", { email: "x@acme.example" }), "invalid-field", { field: "role" });
    expectProblem(await write("POST", "/users", { ...invite, active: false }), "invalid-field", { field: "active" });
    expectProblem(await write("POST", "/users", { ...invite, firstName: 7 }), "invalid-field", {
      field: "firstName",
    });
    expect(gw.identity.lastRequest("inviteUser")).toBeUndefined();
  });

  it("passes identity's problems on: invalid-email, invalid-role, email-already-in-use, seat-limit-exceeded", async () => {
    expectProblem(await write("POST", "/users", { ...invite, email: "not-an-email" }), "invalid-email");
    expectProblem(await write("POST", "/users", { ...invite, role: "Owner" }), "invalid-role");
    expectProblem(await write("POST", "/users", { ...invite, role: "Partner Admin" }), "invalid-role");
    expectProblem(await write("POST", "/users", { ...invite, email: "ada@acme.example" }), "email-already-in-use", {
      existingUserId: ADA,
    });
    gw.identity.seatLimits.set(ORG, 2);
    expectProblem(await write("POST", "/users", invite), "seat-limit-exceeded", { seatLimit: 2, remainingSeats: 0 });
  });

  it("requires an Idempotency-Key and users:write", async () => {
    expectProblem(await write("POST", "/users", invite, { "idempotency-key": undefined }), "idempotency-key-required");
    const reader = gw.identity.addToken({ orgId: ORG, scopes: ["users:read"] });
    expectProblem(await write("POST", "/users", invite, {}, reader), "insufficient-scope", {
      requiredScope: "users:write",
    });
  });

  it("invites into the child when delegating, with Platform-Acting-On", async () => {
    const partner = gw.identity.addToken({ orgId: PARTNER_ORG, scopes: [...PARTNER_SCOPES, "users:write"] });
    const res = await write("POST", "/users", invite, { "x-platform-acting-on": SECOND_CHILD_ORG }, partner);
    expect(res.statusCode).toBe(201);
    expect(res.json().orgId).toBe(SECOND_CHILD_ORG);
    expect(res.headers["platform-acting-on"]).toBe(SECOND_CHILD_ORG);
    expect(gw.identity.contexts.at(-1)).toMatchObject({ orgId: SECOND_CHILD_ORG, parentOrgId: PARTNER_ORG });
    expectProblem(
      await write("POST", "/users", invite, { "x-platform-acting-on": CHILD_ORG }, partner),
      "delegation-scope-insufficient",
      { requiredScope: "users:write" },
    );
  });
});

describe("PATCH /users/{userId}", () => {
  const ifMatch = (version: number | string) => ({ "if-match": `W/"${version}"` });

  it("changes present fields, clears those sent as null, and answers with a fresh ETag", async () => {
    const res = await write(
      "PATCH",
      `/users/${ADA}`,
      { title: "Founder", department: null, phoneNumber: null, active: true },
      ifMatch(3),
    );
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe('W/"4"');
    expect(Object.keys(res.json()).sort()).toEqual(DETAIL_FIELDS);
    expect(res.json()).toMatchObject({
      title: "Founder",
      department: null,
      phoneNumber: null,
      firstName: "Ada",
      updatedAt: "2026-01-15T12:00:00.000Z",
    });
    const req = gw.identity.lastRequest<UpdateUserRequest>("updateUser")!;
    expect(req.userId).toBe(ADA);
    expect(req.expectedVersion).toBe(3n);
    expect(req.patch).toMatchObject({ title: "Founder", active: true, cleared: ["department", "phone_number"] });
    expect(req.patch?.firstName).toBeUndefined();
    expect(req.patch?.department).toBeUndefined();
  });

  it("accepts an empty patch and the strong form of the ETag", async () => {
    const res = await write("PATCH", `/users/${BEN}`, {}, { "if-match": '"1"' });
    expect(res.statusCode).toBe(200);
    expect(gw.identity.lastRequest<UpdateUserRequest>("updateUser")?.patch).toMatchObject({ cleared: [] });
  });

  it("answers 400 invalid-field for email, unknown and mistyped fields", async () => {
    const email = expectProblem(
      await write("PATCH", `/users/${ADA}`, { email: "new@acme.example" }, ifMatch(3)),
      "invalid-field",
      { field: "email" },
    );
    expect(email.detail).toMatch(/email is not mutable/);
    expectProblem(await write("PATCH", `/users/${ADA}`, { nickname: "A" }, ifMatch(3)), "invalid-field", {
      field: "nickname",
    });
    expectProblem(await write("PATCH", `/users/${ADA}`, { active: "no" }, ifMatch(3)), "invalid-field", {
      field: "active",
    });
    expectProblem(await write("PATCH", `/users/${ADA}`, { role: null }, ifMatch(3)), "invalid-field", {
      field: "role",
    });
    expect(gw.identity.lastRequest("updateUser")).toBeUndefined();
  });

  it("answers 412 precondition-failed without a usable If-Match, and on a stale one", async () => {
    const missing = expectProblem(await write("PATCH", `/users/${ADA}`, { title: "X" }), "precondition-failed");
    expect(missing.detail).toMatch(/If-Match/);
    for (const value of ["3", "W/3", "*", 'W/"abc"', 'W/"3", W/"4"', ""]) {
      const body = expectProblem(
        await write("PATCH", `/users/${ADA}`, { title: "X" }, { "if-match": value }),
        "precondition-failed",
      );
      expect(body.detail).toMatch(/If-Match/);
    }
    expect(gw.identity.lastRequest("updateUser")).toBeUndefined();
    expectProblem(await write("PATCH", `/users/${ADA}`, { title: "X" }, ifMatch(2)), "precondition-failed");
  });

  it("replays with the original 200 and X-Idempotent-Replay: true", async () => {
    const headers = { ...ifMatch(3), "idempotency-key": "retitle-ada" };
    const first = await write("PATCH", `/users/${ADA}`, { title: "Founder" }, headers);
    const again = await write("PATCH", `/users/${ADA}`, { title: "Founder" }, headers);
    expect(first.headers["x-idempotent-replay"]).toBeUndefined();
    expect(again.statusCode).toBe(200);
    expect(again.headers["x-idempotent-replay"]).toBe("true");
    expect(again.headers.etag).toBe('W/"4"');
    expect(again.json()).toEqual(first.json());
  });

  it("passes identity's rule problems on: invalid-role, last-administrator, user-not-found", async () => {
    expectProblem(await write("PATCH", `/users/${BEN}`, { role: "Owner" }, ifMatch(1)), "invalid-role");
    expectProblem(await write("PATCH", `/users/${ADA}`, { active: false }, ifMatch(3)), "last-administrator");
    expectProblem(await write("PATCH", `/users/${DAN}`, { title: "X" }, ifMatch(1)), "user-not-found");
  });
});
