import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type User, UserService } from "@platform/contracts/identity";
import { EVENT_TYPES } from "@platform/kit/events";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { OrganizationRecord, UserRecord } from "../src/domain/model.js";
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
const at = (iso: string) => new Date(iso);

let t: TestIdentity;
let acme: OrganizationRecord;
let other: OrganizationRecord;
/** Acme's users by name, besides its administrator. */
let u: Record<"admin" | "ae" | "sdr" | "pending" | "expired" | "gone", UserRecord>;
let foreignUser: UserRecord;

const users = (orgId = acme.id, opts: CallerOptions = {}) =>
  t.caller(UserService, orgId, { scopes: ["users:read", "users:write"], ...opts });

beforeAll(async () => {
  t = await createTestIdentity();
});
afterAll(() => t.close());
beforeEach(async () => {
  await t.reset();
  const now = t.clock.now().getTime();
  u = {
    admin: aUser("", {
      email: "blake.rivera@acme.example",
      firstName: "Blake",
      lastName: "Rivera",
      displayName: "Blake Rivera",
      role: "Admin",
      lastLoginAt: at("2026-01-10T00:00:00Z"),
      createdAt: at("2025-01-02T00:00:00Z"),
      updatedAt: at("2025-06-02T00:00:00Z"),
    }),
    ae: aUser("", {
      email: "casey.morgan@acme.example",
      firstName: "casey",
      lastName: "Morgan",
      displayName: "casey Morgan",
      title: "Account Executive",
      phoneNumber: "+12025550103",
      twoFactorEnabled: true,
      crmUserId: "005-ae",
      lastLoginAt: at("2026-01-12T00:00:00Z"),
      createdAt: at("2025-01-03T00:00:00Z"),
      updatedAt: at("2025-06-03T00:00:00Z"),
    }),
    sdr: aUser("", {
      email: "devon_100%@acme.example",
      firstName: null,
      lastName: "Lee",
      displayName: "Lee",
      lastLoginAt: null,
      createdAt: at("2025-01-04T00:00:00Z"),
      updatedAt: at("2025-06-04T00:00:00Z"),
    }),
    pending: aUser("", {
      email: "gray.patel@acme.example",
      firstName: "Gray",
      lastName: null,
      displayName: "Gray",
      invitationStatus: "pending",
      invitedAt: new Date(now - 2 * DAY_MS),
      createdAt: new Date(now - 2 * DAY_MS),
      updatedAt: new Date(now - 2 * DAY_MS),
    }),
    expired: aUser("", {
      email: "harper.quinn@acme.example",
      firstName: "Harper",
      lastName: "Quinn",
      displayName: "Harper Quinn",
      invitationStatus: "pending",
      invitedAt: new Date(now - 20 * DAY_MS),
      createdAt: new Date(now - 20 * DAY_MS),
      updatedAt: new Date(now - 20 * DAY_MS),
    }),
    gone: aUser("", {
      email: "indigo.brooks@acme.example",
      firstName: "Indigo",
      lastName: "Brooks",
      displayName: "Indigo Brooks",
      active: false,
      lastLoginAt: at("2025-07-31T00:00:00Z"),
      createdAt: at("2025-01-05T00:00:00Z"),
      updatedAt: at("2025-08-01T00:00:00Z"),
    }),
  };
  acme = await givenOrganization(t.db, { name: "Acme", seatTotal: 7 }, (orgId) =>
    Object.values(u).map((x) => Object.assign(x, { orgId })),
  );
  // The administrator: "Olive Owner", created 2025-06-01, never signed in.
  other = await givenOrganization(t.db, { name: "Other" }, (orgId) => {
    foreignUser = aUser(orgId, { email: "someone@other.example" });
    return [foreignUser];
  });
});

async function listAll(query: Record<string, unknown>, limit = 2): Promise<User[]> {
  const out: User[] = [];
  let cursor = "";
  for (let page = 0; page < 20; page++) {
    const res = await users().listUsers({ limit, ...query, cursor });
    expect(res.users.length).toBeLessThanOrEqual(limit);
    out.push(...res.users);
    if (!res.nextCursor) return out;
    cursor = res.nextCursor;
  }
  throw new Error("no last page");
}

const ids = (list: { id: string }[]) => list.map((x) => x.id);

describe("ListUsers", () => {
  it("lists active users newest first by default, in the list view", async () => {
    const { users: listed, nextCursor } = await users().listUsers({});
    expect(ids(listed)).toEqual([u.pending.id, u.expired.id, acme.administratorUserId, u.sdr.id, u.ae.id, u.admin.id]);
    expect(nextCursor).toBe("");
    const ae = listed.find((x) => x.id === u.ae.id);
    expect(ae).toMatchObject({ email: "casey.morgan@acme.example", title: "Account Executive", role: "User" });
    // Detail-only fields stay unset in the list view.
    expect(ae?.phoneNumber).toBeUndefined();
    expect(ae?.invitedBy).toBeUndefined();
    expect(ae?.inviteTime).toBeUndefined();
    expect(ae?.crmUserId).toBeUndefined();
    expect(ae?.twoFactorEnabled).toBe(false);
    expect(listed.find((x) => x.id === u.expired.id)?.invitationStatus).toBe("expired");
    expect(listed.find((x) => x.id === u.pending.id)?.invitationStatus).toBe("pending");
    expect(listed.find((x) => x.id === u.sdr.id)?.firstName).toBeUndefined();
  });

  const everyActive = () => [acme.administratorUserId, u.admin.id, u.ae.id, u.sdr.id, u.pending.id, u.expired.id];

  it.each([
    // Nulls last in both directions; ids break ties in the sort's direction.
    ["lastLoginAt", () => [u.admin.id, u.ae.id, ...nullsById()]],
    ["-lastLoginAt", () => [u.ae.id, u.admin.id, ...nullsById().reverse()]],
    ["firstName", () => [u.admin.id, u.ae.id, u.pending.id, u.expired.id, acme.administratorUserId, u.sdr.id]],
    ["-firstName", () => [acme.administratorUserId, u.expired.id, u.pending.id, u.ae.id, u.admin.id, u.sdr.id]],
    ["lastName", () => [u.sdr.id, u.ae.id, u.expired.id, u.admin.id, acme.administratorUserId, u.pending.id]],
    ["email", () => [u.admin.id, u.ae.id, u.sdr.id, u.pending.id, u.expired.id, acme.administratorUserId]],
    ["-updatedAt", () => [u.pending.id, u.expired.id, u.sdr.id, u.ae.id, u.admin.id, acme.administratorUserId]],
    ["createdAt", () => [u.admin.id, u.ae.id, u.sdr.id, acme.administratorUserId, u.expired.id, u.pending.id]],
  ])("pages by %s with keyset cursors, never repeating or skipping", async (sort, expected) => {
    const all = await listAll({ sort });
    expect(ids(all)).toEqual(expected());
    expect(new Set(ids(all))).toEqual(new Set(everyActive()));
    // Every page size walks the same order.
    expect(ids(await listAll({ sort }, 1))).toEqual(expected());
    expect(ids(await listAll({ sort }, 5))).toEqual(expected());
  });

  /** Users who never signed in, by id (the administrator and the invitees). */
  const nullsById = () => [acme.administratorUserId, u.sdr.id, u.pending.id, u.expired.id].sort();

  it("pages among users sharing one sort value by id", async () => {
    const same = at("2025-03-03T00:00:00Z");
    await t.db.query("UPDATE identity.users SET created_at = $1 WHERE org_id = $2", [same, acme.id]);
    const all = await listAll({ sort: "createdAt" });
    expect(ids(all)).toEqual([...everyActive()].sort());
  });

  it("refuses a cursor of another sort, an altered one, and an unknown sort field", async () => {
    const { nextCursor } = await users().listUsers({ limit: 2, sort: "email" });
    expect(await problemOf(users().listUsers({ limit: 2, sort: "-email", cursor: nextCursor }))).toBe("invalid-cursor");
    expect(await problemOf(users().listUsers({ limit: 2, sort: "email", cursor: `x${nextCursor}` }))).toBe(
      "invalid-cursor",
    );
    const bad = await problemDetailOf(users().listUsers({ sort: "password" }));
    expect(bad).toMatchObject({ name: "invalid-sort-field", extensions: { field: "password" } });
  });

  it("searches email, first, last and display names case-insensitively, taking % literally", async () => {
    const search = async (s: string) => ids((await users().listUsers({ search: s, active: "all" })).users).sort();
    expect(await search("CASEY")).toEqual([u.ae.id]);
    expect(await search("rivera")).toEqual([u.admin.id]);
    expect(await search("olive own")).toEqual([acme.administratorUserId]);
    expect(await search("brooks")).toEqual([u.gone.id]);
    expect(await search("100%")).toEqual([u.sdr.id]);
    expect(await search("%")).toEqual([u.sdr.id]);
    expect(await search("_100")).toEqual([u.sdr.id]);
    expect(await search("nobody")).toEqual([]);
  });

  it("filters by role, activity and update time", async () => {
    const list = async (q: Record<string, unknown>) => ids((await users().listUsers(q)).users).sort();
    expect(await list({ role: "Admin" })).toEqual([acme.administratorUserId, u.admin.id].sort());
    expect(await list({ role: "Partner Admin" })).toEqual([]);
    expect(await list({ active: "false" })).toEqual([u.gone.id]);
    expect(await list({ active: "true" })).toEqual([...everyActive()].sort());
    expect(await list({ active: "all" })).toEqual([...everyActive(), u.gone.id].sort());
    expect(await list({ since: timestampFromDate(at("2025-06-03T00:00:00Z")), active: "all" })).toEqual(
      [u.ae.id, u.sdr.id, u.pending.id, u.expired.id, u.gone.id].sort(),
    );
  });

  it("answers invalid-filter for a bad role or active value", async () => {
    expect(await problemOf(users().listUsers({ role: "Owner" }))).toBe("invalid-filter");
    expect(await problemOf(users().listUsers({ role: "admin" }))).toBe("invalid-filter");
    expect(await problemOf(users().listUsers({ active: "yes" }))).toBe("invalid-filter");
  });

  it("shows only the caller's organization", async () => {
    expect(ids((await users(other.id).listUsers({})).users).sort()).toEqual(
      [other.administratorUserId, foreignUser.id].sort(),
    );
  });
});

describe("GetUser", () => {
  it("returns the detail view", async () => {
    const { user } = await users().getUser({ userId: u.ae.id });
    expect(user).toMatchObject({
      id: u.ae.id,
      orgId: acme.id,
      phoneNumber: "+12025550103",
      twoFactorEnabled: true,
      crmUserId: "005-ae",
      invitationStatus: "accepted",
      version: 1n,
    });
    expect(user?.lastLoginTime && timestampDate(user.lastLoginTime)).toEqual(at("2026-01-12T00:00:00Z"));
    expect(user?.inviteTime && timestampDate(user.inviteTime)).toEqual(u.ae.invitedAt);
  });

  it("names the inviting user, and leaves the inviter of the first administrator unset", async () => {
    await t.db.query("UPDATE identity.users SET invited_by_user_id = $1 WHERE id = $2", [
      acme.administratorUserId,
      u.ae.id,
    ]);
    expect((await users().getUser({ userId: u.ae.id })).user?.invitedBy).toMatchObject({
      userId: acme.administratorUserId,
      displayName: "Olive Owner",
    });
    expect((await users().getUser({ userId: acme.administratorUserId })).user?.invitedBy).toBeUndefined();
  });

  it("gives another org's user the same 404 as an unknown one", async () => {
    const foreign = await problemDetailOf(users().getUser({ userId: foreignUser.id }));
    const unknown = await problemDetailOf(users().getUser({ userId: "usr_0000000000000000000000zz" }));
    expect(foreign.name).toBe("user-not-found");
    expect(unknown.name).toBe("user-not-found");
    expect(foreign.extensions).toEqual(unknown.extensions);
    expect(await problemOf(users().getUser({ userId: "org_0000000000000000000000zz" }))).toBe("invalid-resource-id");
  });

  it("derives an expired invitation from the clock: pending for 14 days, then expired", async () => {
    const status = async () => (await users().getUser({ userId: u.pending.id })).user?.invitationStatus;
    expect(await status()).toBe("pending");
    t.clock.advance(12 * DAY_MS);
    expect(await status()).toBe("pending");
    t.clock.advance(1);
    expect(await status()).toBe("expired");
  });
});

describe("InviteUser", () => {
  const invite = (req: Record<string, unknown>, opts: CallerOptions = {}) =>
    users(acme.id, opts).inviteUser({ role: "User", ...req } as never);

  it("creates a pending user invited by the API, and a UserInvited event in the same commit", async () => {
    const { user } = await invite({ email: "  New.Person@ACME.example ", firstName: " New ", lastName: "Person" });
    expect(user).toMatchObject({
      orgId: acme.id,
      email: "new.person@acme.example",
      firstName: "New",
      lastName: "Person",
      displayName: "New Person",
      role: "User",
      active: true,
      invitationStatus: "pending",
      invitedBy: { userId: "", displayName: "Acme (API)" },
      twoFactorEnabled: false,
      version: 1n,
    });
    expect(user?.id).toMatch(/^usr_/);
    expect(user?.lastLoginTime).toBeUndefined();
    expect(user?.inviteTime && timestampDate(user.inviteTime)).toEqual(t.clock.now());
    expect(user?.createTime && timestampDate(user.createTime)).toEqual(t.clock.now());
    expect((await users().getUser({ userId: user?.id ?? "" })).user).toEqual(user);
    expect(await outboxRows(t.db)).toEqual([
      {
        type: EVENT_TYPES.userInvited,
        key: acme.id,
        subject: user?.id,
        // The profile scheduling's hosts projection needs; identity knows no time zone (empty: omitted).
        data: {
          userId: user?.id,
          orgId: acme.id,
          email: "new.person@acme.example",
          role: "User",
          firstName: "New",
          lastName: "Person",
          displayName: "New Person",
          version: "1",
        },
      },
    ]);
    expect(t.commits()).toBe(1);
  });

  it("uses the email as the display name of an invitee without a name", async () => {
    const { user } = await invite({ email: "anon@acme.example", role: "Admin", title: "Ops" });
    expect(user).toMatchObject({ displayName: "anon@acme.example", role: "Admin", title: "Ops" });
    expect(user?.firstName).toBeUndefined();
  });

  it("rejects invalid emails", async () => {
    for (const email of ["", "   ", "plain", "@acme.example", "a@", "a@b", "a b@acme.example", "a..b@acme.example"]) {
      expect(await problemOf(invite({ email }))).toBe("invalid-email");
    }
    expect(await outboxRows(t.db)).toEqual([]);
  });

  it("rejects unknown roles, and Partner Admin outside partner-admin organizations", async () => {
    expect(await problemOf(invite({ email: "a@acme.example", role: "Owner" }))).toBe("invalid-role");
    expect(await problemOf(invite({ email: "a@acme.example", role: "" }))).toBe("invalid-role");
    expect(await problemOf(invite({ email: "a@acme.example", role: "Partner Admin" }))).toBe("invalid-role");
    const partner = await givenOrganization(t.db, { name: "Partner", partnerAdmin: true });
    const { user } = await users(partner.id).inviteUser({ email: "pa@partner.example", role: "Partner Admin" });
    expect(user?.role).toBe("Partner Admin");
  });

  it("refuses an email held by an active or pending user, naming that user", async () => {
    for (const holder of [u.ae, u.pending]) {
      const p = await problemDetailOf(invite({ email: holder.email.toUpperCase() }));
      expect(p).toMatchObject({ name: "email-already-in-use", extensions: { existingUserId: holder.id } });
    }
  });

  it("renews an expired invitation for the same user", async () => {
    const { user } = await invite({ email: u.expired.email, role: "Admin", firstName: "Harper" });
    expect(user).toMatchObject({ id: u.expired.id, invitationStatus: "pending", role: "Admin", version: 2n });
    expect(user?.lastName).toBeUndefined();
    expect(user?.inviteTime && timestampDate(user.inviteTime)).toEqual(t.clock.now());
    expect(user?.createTime && timestampDate(user.createTime)).toEqual(u.expired.createdAt);
    expect((await outboxRows(t.db)).map((e) => e.type)).toEqual([EVENT_TYPES.userInvited]);
  });

  it("invites a deactivated user's email as a new user", async () => {
    const { user } = await invite({ email: u.gone.email });
    expect(user?.id).not.toBe(u.gone.id);
  });

  it("stops at the seat cap with seatLimit and remainingSeats", async () => {
    // 7 seats: administrator, admin, ae, sdr and the pending invitation hold 5.
    await invite({ email: "six@acme.example" });
    await invite({ email: "seven@acme.example" });
    const p = await problemDetailOf(invite({ email: "eight@acme.example" }));
    expect(p).toMatchObject({ name: "seat-limit-exceeded", extensions: { seatLimit: 7, remainingSeats: 0 } });
    // Once the pending invitation expires, its seat is free again.
    t.clock.advance(12 * DAY_MS + 1);
    expect((await invite({ email: "eight@acme.example" })).user?.invitationStatus).toBe("pending");
  });

  it("replays a repeated Idempotency-Key without inviting twice, and refuses it for another body", async () => {
    const key = { idempotencyKey: "invite-1" };
    const first = await withHeaders((o) =>
      users(acme.id, key).inviteUser({ email: "x@acme.example", role: "User" }, o),
    );
    const replay = await withHeaders((o) =>
      users(acme.id, key).inviteUser({ email: "x@acme.example", role: "User" }, o),
    );
    expect(replay.headers.get("x-idempotent-replay")).toBe("true");
    expect(replay.response).toEqual(first.response);
    expect(await outboxRows(t.db)).toHaveLength(1);
    expect(await problemOf(invite({ email: "y@acme.example" }, key))).toBe("idempotency-key-conflict");
    // Keys are scoped per token.
    const otherToken = await invite({ email: "x2@acme.example" }, { ...key, tokenId: "tok_other" });
    expect(otherToken.user?.email).toBe("x2@acme.example");
  });

  it("invites into the child when a partner delegates", async () => {
    const partner = await givenOrganization(t.db, { name: "Partner", partnerAdmin: true });
    const { user } = await users(acme.id, { parentOrgId: partner.id }).inviteUser({
      email: "delegated@acme.example",
      role: "User",
    });
    expect(user).toMatchObject({ orgId: acme.id, invitedBy: { userId: "", displayName: "Acme (API)" } });
  });
});

describe("UpdateUser", () => {
  const update = (user: UserRecord | string, patch: Record<string, unknown>, version = 1n, opts: CallerOptions = {}) =>
    users(acme.id, opts).updateUser({
      userId: typeof user === "string" ? user : user.id,
      expectedVersion: version,
      patch: { cleared: [], ...patch } as never,
    });

  it("merges present fields, clears nulled ones, recomputes the display name and bumps the version", async () => {
    t.clock.advance(60_000);
    const { user } = await update(u.ae, { title: "Senior AE", phoneNumber: "+12025550199", cleared: ["first_name"] });
    expect(user).toMatchObject({
      title: "Senior AE",
      phoneNumber: "+12025550199",
      lastName: "Morgan",
      displayName: "Morgan",
      version: 2n,
      crmUserId: "005-ae",
    });
    expect(user?.firstName).toBeUndefined();
    expect(user?.updateTime && timestampDate(user.updateTime)).toEqual(t.clock.now());
    expect((await users().getUser({ userId: u.ae.id })).user).toEqual(user);
    expect(await outboxRows(t.db)).toEqual([
      {
        type: EVENT_TYPES.userUpdated,
        key: acme.id,
        subject: u.ae.id,
        data: {
          userId: u.ae.id,
          orgId: acme.id,
          version: "2",
          changedFields: ["firstName", "displayName", "title", "phoneNumber"],
          active: true,
          email: u.ae.email,
          lastName: "Morgan",
          displayName: "Morgan",
        },
      },
    ]);
  });

  it("bumps the version of an empty patch too", async () => {
    const { user } = await update(u.ae, {});
    expect(user?.version).toBe(2n);
    expect((await outboxRows(t.db)).map((e) => (e.data as { version: string }).version)).toEqual(["2"]);
  });

  it("answers precondition-failed for a stale version, writing nothing", async () => {
    expect(await problemOf(update(u.ae, { title: "x" }, 2n))).toBe("precondition-failed");
    expect((await users().getUser({ userId: u.ae.id })).user?.version).toBe(1n);
    expect(await outboxRows(t.db)).toEqual([]);
  });

  it("gives another org's user the same 404 as an unknown one", async () => {
    expect(await problemOf(update(foreignUser, { title: "x" }))).toBe("user-not-found");
    expect(await problemOf(update("usr_0000000000000000000000zz", { title: "x" }))).toBe("user-not-found");
  });

  it("rejects invalid roles and fields", async () => {
    expect(await problemOf(update(u.ae, { role: "Owner" }))).toBe("invalid-role");
    expect(await problemOf(update(u.ae, { role: "Partner Admin" }))).toBe("invalid-role");
    expect(await problemDetailOf(update(u.ae, { cleared: ["role"] }))).toMatchObject({
      name: "invalid-field",
      extensions: { field: "role" },
    });
    expect(await problemDetailOf(update(u.ae, { title: "t".repeat(201) }))).toMatchObject({
      name: "invalid-field",
      extensions: { field: "title" },
    });
  });

  it("changes any role, keeping an administrator", async () => {
    expect((await update(u.ae, { role: "Admin" })).user?.role).toBe("Admin");
    expect((await update(u.admin, { role: "User" })).user?.role).toBe("User");
  });

  it("refuses to take away the last administrator", async () => {
    await update(u.admin, { role: "User" });
    const owner = acme.administratorUserId;
    expect(await problemOf(update(owner, { role: "User" }))).toBe("last-administrator");
    // A pending Admin is not an administrator yet.
    await update(u.pending, { role: "Admin" });
    expect(await problemOf(update(owner, { role: "User" }))).toBe("last-administrator");
    // Changes that keep the administrator are fine.
    expect((await update(owner, { title: "CEO" })).user?.title).toBe("CEO");
  });

  it("refuses to deactivate the contractual administrator before anything else", async () => {
    const owner = acme.administratorUserId;
    expect(await problemOf(update(owner, { active: false }))).toBe("administrator-transfer-required");
    await update(u.admin, { role: "User" });
    expect(await problemOf(update(owner, { active: false }))).toBe("administrator-transfer-required");
    expect(await problemOf(update(owner, { active: false, role: "User" }))).toBe("administrator-transfer-required");
  });

  it("deactivates an Admin while another administrator remains", async () => {
    const { user } = await update(u.admin, { active: false });
    expect(user).toMatchObject({ active: false, role: "Admin" });
  });

  it("reactivates with the role held at deactivation and no new invitation", async () => {
    const off = await update(u.admin, { active: false });
    const on = await update(u.admin, { active: true }, off.user?.version);
    expect(on.user).toMatchObject({ active: true, role: "Admin", version: 3n, invitationStatus: "accepted" });
    expect((await outboxRows(t.db)).map((e) => [e.type, (e.data as { active?: boolean }).active ?? false])).toEqual([
      [EVENT_TYPES.userUpdated, false],
      [EVENT_TYPES.userUpdated, true],
    ]);
  });

  it("refuses to reactivate into an email someone else now holds, or beyond the seat cap", async () => {
    const { user: successor } = await users().inviteUser({ email: u.gone.email, role: "User" });
    expect(await problemDetailOf(update(u.gone, { active: true }))).toMatchObject({
      name: "email-already-in-use",
      extensions: { existingUserId: successor?.id },
    });
    await users().inviteUser({ email: "seven@acme.example", role: "User" });
    const full = await users().updateUser({
      userId: successor?.id ?? "",
      expectedVersion: 1n,
      patch: { active: false, cleared: [] },
    });
    expect(full.user?.active).toBe(false);
    await users().inviteUser({ email: "seven-again@acme.example", role: "User" });
    expect(await problemDetailOf(update(u.gone, { active: true }))).toMatchObject({
      name: "seat-limit-exceeded",
      extensions: { seatLimit: 7, remainingSeats: 0 },
    });
  });

  it("replays a repeated Idempotency-Key and refuses it for another body", async () => {
    const key = { idempotencyKey: "patch-1" };
    const first = await withHeaders((o) =>
      users(acme.id, key).updateUser({ userId: u.ae.id, expectedVersion: 1n, patch: { title: "A", cleared: [] } }, o),
    );
    const replay = await withHeaders((o) =>
      users(acme.id, key).updateUser({ userId: u.ae.id, expectedVersion: 1n, patch: { title: "A", cleared: [] } }, o),
    );
    expect(replay.headers.get("x-idempotent-replay")).toBe("true");
    expect(replay.response).toEqual(first.response);
    expect(replay.response.user?.version).toBe(2n);
    expect(await problemOf(update(u.ae, { title: "B" }, 1n, key))).toBe("idempotency-key-conflict");
  });
});
