import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ListUsersRequest } from "@platform/contracts/identity";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ADA, API, BEN, buildTestGateway, CAROL, DAN, expectProblem, get, ORG, type TestGateway } from "./harness.js";
import { DETAIL_FIELDS, LIST_FIELDS } from "./user-views.js";

let gw: TestGateway;
let key: string;
beforeEach(async () => {
  gw = await buildTestGateway();
  key = gw.identity.addToken({ orgId: ORG, scopes: ["users:read", "users:write"] });
});
afterEach(async () => {
  await gw.app.close();
});

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
