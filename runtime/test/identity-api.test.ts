import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IdentityAdminService } from "@platform/contracts/identity";
import { ALL_SCOPES } from "@platform/kit/scopes";
import { eventually } from "@platform/kit/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { EmbeddedPlatform } from "../src/platform.js";
import { API, apiTest, CLOSE_TIMEOUT_MS, START_TIMEOUT_MS } from "./support/platform.js";

// The identity context end to end on the embedded platform: gateway → identity → PGlite.
const dataDir = mkdtempSync(join(tmpdir(), "platform-identity-api-"));
const t = apiTest({ name: "identity-api-test", admin: true, platform: { dataDir } });
const { call, problemType, keys, clock } = t;
let platform: EmbeddedPlatform;
let orgs: Record<string, string>;

beforeAll(async () => {
  platform = await t.start();
  const admin = t.adminClient(IdentityAdminService);
  orgs = Object.fromEntries((await admin.listOrganizations({})).organizations.map((o) => [o.name, o.id]));
}, START_TIMEOUT_MS);
afterAll(async () => {
  await t.close();
  rmSync(dataDir, { recursive: true, force: true });
}, CLOSE_TIMEOUT_MS);
// Fresh rate-limit windows: this file makes more than 20 writes.
beforeEach(() => clock.advance(61_000));

describe("PATCH /organizations/{orgId}", () => {
  it("updates with If-Match, bumps the ETag, and replays by Idempotency-Key", async () => {
    const me = await call("GET", "/organizations/me");
    const etag = me.headers.etag as string;
    const body = { name: "Acme Corporation", employeeCount: 1300 };
    const headers = { "if-match": etag, "idempotency-key": "org-rename-1" };
    const res = await call("PATCH", `/organizations/${orgs["Acme Corp"]}`, { body, headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ name: "Acme Corporation", employeeCount: 1300 });
    expect(res.headers.etag).not.toBe(etag);
    const replay = await call("PATCH", `/organizations/${orgs["Acme Corp"]}`, { body, headers });
    expect(replay.statusCode).toBe(200);
    expect(replay.headers["x-idempotent-replay"]).toBe("true");
    expect(replay.json()).toEqual(res.json());
    const conflict = await call("PATCH", `/organizations/${orgs["Acme Corp"]}`, {
      body: { name: "Other" },
      headers,
    });
    expect(conflict.statusCode).toBe(422);
    expect(conflict.json().type).toBe(problemType("idempotency-key-conflict"));
    const stale = await call("PATCH", `/organizations/${orgs["Acme Corp"]}`, { body, headers: { "if-match": etag } });
    expect(stale.statusCode).toBe(412);
    expect(stale.json().type).toBe(problemType("precondition-failed"));
  });

  it("answers the spec's errors", async () => {
    const etag = (await call("GET", "/organizations/me")).headers.etag as string;
    const at = (body: unknown, key?: string) =>
      call("PATCH", `/organizations/${orgs["Acme Corp"]}`, {
        body,
        headers: { "if-match": etag },
        ...(key ? { apiKey: key } : {}),
      });
    expect((await at({ primaryEmailDomain: "evil.example" })).json().type).toBe(
      problemType("email-domain-not-verified"),
    );
    for (const bad of [
      { administrator: {} },
      { emailDomains: [] },
      { sourceRefs: {} },
      { color: "red" },
      { name: "x".repeat(201) },
      { employeeCount: 0 },
    ]) {
      const res = await at(bad);
      expect(res.statusCode).toBe(400);
      expect(res.json().type).toBe(problemType("invalid-field"));
    }
    const readonly = await at({ name: "x" }, keys["acme-readonly"]);
    expect(readonly.statusCode).toBe(403);
    expect(readonly.json().type).toBe(problemType("write-scope-required"));
    const other = await call("PATCH", `/organizations/${orgs.Umbrella}`, { body: {}, headers: { "if-match": etag } });
    expect(other.statusCode).toBe(404);
    expect(other.json().type).toBe(problemType("organization-not-found"));
  });
});

describe("users", () => {
  it("invites, lists, reads and updates a user", async () => {
    const invited = await call("POST", "/users", {
      body: { email: "  New.Person@Acme.Example ", role: "User", firstName: "New" },
    });
    expect(invited.statusCode).toBe(201);
    const user = invited.json();
    expect(user).toMatchObject({
      email: "new.person@acme.example",
      role: "User",
      active: true,
      invitationStatus: "pending",
      lastLoginAt: null,
    });
    expect(user.invitedAt).toBe(clock.now().toISOString());
    expect(user.invitedBy).toHaveProperty("displayName");
    expect(invited.headers.etag).toMatch(/^W\/"\d+"$/);

    const detail = await call("GET", `/users/${user.id}`);
    expect(detail.json()).toEqual(user);

    const list = await call("GET", "/users?search=new.person");
    expect(list.statusCode).toBe(200);
    const [item] = list.json().items;
    expect(item.id).toBe(user.id);
    for (const hidden of ["phoneNumber", "invitedBy", "invitedAt", "twoFactorEnabled", "sourceRefs"]) {
      expect(item).not.toHaveProperty(hidden);
    }

    const patched = await call("PATCH", `/users/${user.id}`, {
      body: { title: "Analyst", firstName: null },
      headers: { "if-match": detail.headers.etag as string },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ title: "Analyst", firstName: null });
    expect(patched.headers.etag).not.toBe(detail.headers.etag);

    const email = await call("PATCH", `/users/${user.id}`, {
      body: { email: "x@acme.example" },
      headers: { "if-match": patched.headers.etag as string },
    });
    expect(email.json().type).toBe(problemType("invalid-field"));
  });

  it("refuses a duplicate email naming the existing user, and bad emails, roles and filters", async () => {
    const first = await call("POST", "/users", { body: { email: "dup@acme.example", role: "User" } });
    const dup = await call("POST", "/users", { body: { email: "DUP@acme.example", role: "User" } });
    expect(dup.statusCode).toBe(409);
    expect(dup.json()).toMatchObject({ type: problemType("email-already-in-use"), existingUserId: first.json().id });
    expect((await call("POST", "/users", { body: { email: "not-an-email", role: "User" } })).json().type).toBe(
      problemType("invalid-email"),
    );
    expect((await call("POST", "/users", { body: { email: "a@acme.example", role: "Owner" } })).json().type).toBe(
      problemType("invalid-role"),
    );
    expect(
      (await call("POST", "/users", { body: { email: "b@acme.example", role: "Partner Admin" } })).json().type,
    ).toBe(problemType("invalid-role"));
    expect((await call("GET", "/users?role=Owner")).json().type).toBe(problemType("invalid-filter"));
  });

  it("pages through every user once, under each sort, and refuses a cursor from another sort", async () => {
    const all = (await call("GET", "/users?active=all&limit=100")).json().items.map((u: { id: string }) => u.id);
    for (const sort of ["-createdAt", "email", "-lastLoginAt", "firstName"]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const url = `/users?active=all&limit=2&sort=${sort}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
        const page = await call("GET", url);
        expect(page.statusCode).toBe(200);
        seen.push(...page.json().items.map((u: { id: string }) => u.id));
        cursor = page.json().nextCursor;
      } while (cursor);
      expect(seen.sort()).toEqual([...all].sort());
    }
    const first = (await call("GET", "/users?active=all&limit=2&sort=email")).json().nextCursor as string;
    const replay = await call("GET", `/users?active=all&limit=2&sort=-email&cursor=${encodeURIComponent(first)}`);
    expect(replay.statusCode).toBe(400);
    expect(replay.json().type).toBe(problemType("invalid-cursor"));
  });

  it("gives the same 404 for another org's user and an unknown one", async () => {
    const umbrellaUsers = await call("GET", "/users", { apiKey: keys["umbrella-full"] });
    const foreign = umbrellaUsers.json().items[0].id as string;
    const a = await call("GET", `/users/${foreign}`);
    const b = await call("GET", "/users/usr_0000000000000000000000zz");
    expect(a.statusCode).toBe(404);
    const strip = (r: typeof a) => {
      const { requestId: _r, detail: _d, ...rest } = r.json();
      return rest;
    };
    expect(strip(a)).toEqual(strip(b));
    expect(strip(a).type).toBe(problemType("user-not-found"));
  });

  it("keeps an administrator: the contractual owner cannot be deactivated, the last Admin not demoted", async () => {
    const ownerId = (await call("GET", "/organizations/me")).json().administrator.userId as string;
    const owner = await call("GET", `/users/${ownerId}`);
    const deactivate = await call("PATCH", `/users/${ownerId}`, {
      body: { active: false },
      headers: { "if-match": owner.headers.etag as string },
    });
    expect(deactivate.statusCode).toBe(422);
    expect(deactivate.json().type).toBe(problemType("administrator-transfer-required"));

    const admins = (await call("GET", "/users?role=Admin&limit=100")).json().items as { id: string }[];
    for (const other of admins.filter((u) => u.id !== ownerId)) {
      const u = await call("GET", `/users/${other.id}`);
      const demoted = await call("PATCH", `/users/${other.id}`, {
        body: { role: "User" },
        headers: { "if-match": u.headers.etag as string },
      });
      expect(demoted.statusCode).toBe(200);
    }
    const last = await call("PATCH", `/users/${ownerId}`, {
      body: { role: "User" },
      headers: { "if-match": owner.headers.etag as string },
    });
    expect(last.statusCode).toBe(422);
    expect(last.json().type).toBe(problemType("last-administrator"));
    // The refused change left the owner as it was.
    expect((await call("GET", `/users/${ownerId}`)).headers.etag).toBe(owner.headers.etag);
  });

  it("stops at the seat cap with seatLimit and remainingSeats", async () => {
    const ent = (await call("GET", "/organizations/me/entitlements")).json();
    for (let i = 0; i < ent.seats.available; i++) {
      expect(
        (await call("POST", "/users", { body: { email: `seat${i}@acme.example`, role: "User" } })).statusCode,
      ).toBe(201);
    }
    const over = await call("POST", "/users", { body: { email: "one-too-many@acme.example", role: "User" } });
    expect(over.statusCode).toBe(403);
    expect(over.json()).toMatchObject({
      type: problemType("seat-limit-exceeded"),
      seatLimit: ent.seats.total,
      remainingSeats: 0,
    });
  });
});

describe("partner delegation", () => {
  it("lists managed organizations with the effective grants", async () => {
    const res = await call("GET", "/partner/managed-organizations?sort=name", { apiKey: keys["northwind-partner"] });
    expect(res.statusCode).toBe(200);
    const names = res.json().items.map((o: { name: string }) => o.name);
    expect(names).toEqual(["Globex", "Initech"]);
    const globex = res.json().items[0];
    const granted = ["organizations:read", "users:read", "deals:read", "accounts:read", "contacts:read"];
    expect(globex.grantedScopes).toEqual(ALL_SCOPES.filter((s) => granted.includes(s)));
    expect(Object.keys(globex).sort()).toEqual(
      [
        "grantedScopes",
        "hasActiveIssues",
        "id",
        "industry",
        "licenseTier",
        "name",
        "primaryEmailDomain",
        "relationshipCreatedAt",
        "seats",
        "updatedAt",
      ].sort(),
    );
    const acting = await call("GET", "/partner/managed-organizations", {
      apiKey: keys["northwind-partner"],
      headers: { "x-platform-acting-on": orgs.Globex! },
    });
    expect(acting.statusCode).toBe(400);
    expect(acting.json().type).toBe(problemType("invalid-acting-on-org"));
  });

  it("writes to the child and records the delegated request in the audit log", async () => {
    const res = await call("POST", "/users", {
      apiKey: keys["northwind-partner"],
      headers: { "x-platform-acting-on": orgs.Initech! },
      body: { email: "delegated@initech.example", role: "User" },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().orgId).toBe(orgs.Initech);
    expect(res.headers["platform-acting-on"]).toBe(orgs.Initech);
    const admin = t.adminClient(IdentityAdminService);
    const entry = await eventually("the audit entry", async () => {
      await platform.drainOutbox();
      await platform.bus.idle();
      const { entries } = await admin.listDelegationAudit({ parentOrgId: orgs["Northwind Partners"]! });
      return entries.find((e) => e.requestId === res.headers["x-request-id"]);
    });
    expect(entry).toMatchObject({ orgId: orgs.Initech, method: "POST", path: `${API}/users`, status: 201 });
  });
});
