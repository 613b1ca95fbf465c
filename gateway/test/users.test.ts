import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ListUsersRequest, UpdateUserRequest } from "@platform/contracts/identity";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ADA,
  API,
  BEN,
  buildTestGateway,
  CAROL,
  CHILD_ORG,
  DAN,
  expectProblem,
  get,
  ORG,
  PARTNER_ORG,
  PARTNER_SCOPES,
  SECOND_CHILD_ORG,
  type TestGateway,
} from "./harness.js";

let gw: TestGateway;
let key: string;
beforeEach(async () => {
  gw = await buildTestGateway();
  key = gw.identity.addToken({ orgId: ORG, scopes: ["users:read", "users:write"] });
});
afterEach(async () => {
  await gw.app.close();
});

const LIST_FIELDS = [
  "id",
  "orgId",
  "email",
  "firstName",
  "lastName",
  "displayName",
  "title",
  "department",
  "profileImageUrl",
  "role",
  "active",
  "invitationStatus",
  "lastLoginAt",
  "createdAt",
  "updatedAt",
].sort();
const DETAIL_FIELDS = [
  ...LIST_FIELDS,
  "phoneNumber",
  "invitedBy",
  "invitedAt",
  "twoFactorEnabled",
  "sourceRefs",
].sort();

const ADA_DETAIL = {
  id: ADA,
  orgId: ORG,
  email: "ada@acme.example",
  firstName: "Ada",
  lastName: "Admin",
  displayName: "Ada Admin",
  title: "CEO",
  department: "Management",
  phoneNumber: "+1 555 0100",
  profileImageUrl: "https://cdn.example/ada.png",
  role: "Admin",
  active: true,
  invitationStatus: "accepted",
  invitedBy: null,
  invitedAt: null,
  lastLoginAt: "2026-01-14T08:00:00.000Z",
  twoFactorEnabled: true,
  sourceRefs: { crm: { userId: "0055g00000AdA" } },
  createdAt: "2025-03-01T09:30:00.000Z",
  updatedAt: "2025-12-01T10:00:00.000Z",
};

const json = { "content-type": "application/json" };
function write(
  method: "POST" | "PATCH",
  url: string,
  body: unknown,
  headers: Record<string, string | undefined> = {},
  apiKey = key,
) {
  const all: Record<string, string | undefined> = {
    "x-platform-api-key": apiKey,
    "idempotency-key": `k-${Math.random()}`,
    ...json,
    ...headers,
  };
  return gw.app.inject({
    method,
    url: `${API}${url}`,
    headers: Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined)) as Record<string, string>,
    payload: JSON.stringify(body),
  });
}

describe("GET /users", () => {
  it("lists the org's active users in the list view, newest first, nextCursor null on the last page", async () => {
    const res = await get(gw.app, `${API}/users`, key);
    expect(res.statusCode).toBe(200);
    expect(res.headers["x-request-id"]).toMatch(/\S/);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(["items", "nextCursor"]);
    expect(body.nextCursor).toBeNull();
    expect(body.items.map((u: { id: string }) => u.id)).toEqual([BEN, ADA]);
    for (const item of body.items) expect(Object.keys(item).sort()).toEqual(LIST_FIELDS);
    const {
      phoneNumber: _p,
      invitedBy: _b,
      invitedAt: _a,
      twoFactorEnabled: _t,
      sourceRefs: _s,
      ...adaItem
    } = ADA_DETAIL;
    expect(body.items[1]).toEqual(adaItem);
    // Unset optional fields are explicit nulls.
    expect(body.items[0]).toMatchObject({ lastName: null, title: null, department: null, lastLoginAt: null });
    expect(gw.identity.lastRequest<ListUsersRequest>("listUsers")).toMatchObject({
      cursor: "",
      limit: 25,
      sort: "-createdAt",
      search: "",
      role: "",
      active: "true",
    });
    expect(gw.identity.lastRequest<ListUsersRequest>("listUsers")?.since).toBeUndefined();
  });

  it("pages with signed cursors and clamps limit", async () => {
    const first = await get(gw.app, `${API}/users?limit=1&active=all&sort=email`, key);
    expect(first.json().items.map((u: { id: string }) => u.id)).toEqual([ADA]);
    const cursor = first.json().nextCursor as string;
    expect(cursor).toEqual(expect.any(String));
    const second = await get(gw.app, `${API}/users?limit=1&active=all&sort=email&cursor=${cursor}`, key);
    expect(second.json().items.map((u: { id: string }) => u.id)).toEqual([BEN]);
    const third = await get(
      gw.app,
      `${API}/users?limit=1&active=all&sort=email&cursor=${second.json().nextCursor}`,
      key,
    );
    expect(third.json()).toEqual({ items: [expect.objectContaining({ id: CAROL })], nextCursor: null });
    // A cursor is bound to its sort.
    expectProblem(await get(gw.app, `${API}/users?sort=-email&cursor=${cursor}`, key), "invalid-cursor");

    await get(gw.app, `${API}/users?limit=500`, key);
    expect(gw.identity.lastRequest<ListUsersRequest>("listUsers")?.limit).toBe(100);
    await get(gw.app, `${API}/users?limit=0`, key);
    expect(gw.identity.lastRequest<ListUsersRequest>("listUsers")?.limit).toBe(1);
    expectProblem(await get(gw.app, `${API}/users?limit=ten`, key), "invalid-field", { field: "limit" });
  });

  it("passes search, role, active and since to identity", async () => {
    const res = await get(
      gw.app,
      `${API}/users?search=CAR&role=User&active=false&since=2025-10-01T00:00:00.5%2B02:00`,
      key,
    );
    expect(res.json().items.map((u: { id: string }) => u.id)).toEqual([CAROL]);
    const req = gw.identity.lastRequest<ListUsersRequest>("listUsers")!;
    expect(req).toMatchObject({ search: "CAR", role: "User", active: "false" });
    expect(timestampDate(req.since!).toISOString()).toBe("2025-09-30T22:00:00.500Z");
    await get(gw.app, `${API}/users?since=2026-01-01`, key);
    const dateOnly = gw.identity.lastRequest<ListUsersRequest>("listUsers")!;
    expect(timestampDate(dateOnly.since!).toISOString()).toBe("2026-01-01T00:00:00.000Z");
  });

  it("answers 400 invalid-filter for a bad role, active or since", async () => {
    expectProblem(await get(gw.app, `${API}/users?role=Owner`, key), "invalid-filter");
    expectProblem(await get(gw.app, `${API}/users?active=maybe`, key), "invalid-filter");
    expectProblem(await get(gw.app, `${API}/users?role=User&role=Admin`, key), "invalid-filter", { field: "role" });
    const calls = gw.identity.received.length;
    for (const since of ["yesterday", "2026-02-30", "2026-01-15T09:30:00", "1736899200"]) {
      const body = expectProblem(await get(gw.app, `${API}/users?since=${since}`, key), "invalid-filter", {
        field: "since",
      });
      expect(body.detail).toContain("ISO 8601");
    }
    // The gateway refused those itself.
    expect(gw.identity.received.length).toBe(calls);
  });

  it("answers 400 invalid-sort-field outside the allowlist", async () => {
    expectProblem(await get(gw.app, `${API}/users?sort=-phoneNumber`, key), "invalid-sort-field", {
      field: "phoneNumber",
      allowedSortFields: ["updatedAt", "createdAt", "lastLoginAt", "email", "firstName", "lastName"],
    });
  });

  it("answers 403 insufficient-scope without users:read", async () => {
    const other = gw.identity.addToken({ orgId: ORG, scopes: ["organizations:read"] });
    expectProblem(await get(gw.app, `${API}/users`, other), "insufficient-scope", { requiredScope: "users:read" });
  });
});

describe("GET /users/{userId}", () => {
  it("returns the detail view with an ETag", async () => {
    const res = await get(gw.app, `${API}/users/${ADA}`, key);
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe('W/"3"');
    expect(Object.keys(res.json()).sort()).toEqual(DETAIL_FIELDS);
    expect(res.json()).toEqual(ADA_DETAIL);
  });

  it("renders an invitation by an API token with a null userId, and unset fields as null", async () => {
    const ben = await get(gw.app, `${API}/users/${BEN}`, key);
    expect(ben.json()).toMatchObject({
      invitedBy: { userId: null, displayName: "Acme API" },
      invitedAt: "2026-01-10T12:00:00.000Z",
      lastName: null,
      title: null,
      department: null,
      phoneNumber: null,
      profileImageUrl: null,
      lastLoginAt: null,
      twoFactorEnabled: false,
      sourceRefs: {},
    });
    const carol = await get(gw.app, `${API}/users/${CAROL}`, key);
    expect(carol.json().invitedBy).toEqual({ userId: ADA, displayName: "Ada Admin" });
    expect(carol.headers.etag).toBe('W/"5"');
  });

  it("answers 404 user-not-found for another org's user and 400 for a non-user id", async () => {
    const res = await get(gw.app, `${API}/users/${DAN}`, key);
    expectProblem(res, "user-not-found");
    expect(res.headers.etag).toBeUndefined();
    expectProblem(await get(gw.app, `${API}/users/${ORG}`, key), "invalid-resource-id");
  });
});

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
