import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { User } from "@platform/contracts/identity";
import { describe, expect, it } from "vitest";
import { problemDetailOf, problemOf } from "./builders.js";
import { acme, at, DAY_MS, foreignUser, other, t, u, useAcmeUsers, users } from "./users-fixture.js";

useAcmeUsers();

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
