import { timestampDate } from "@bufbuild/protobuf/wkt";
import { EVENT_TYPES } from "@platform/kit/events";
import { describe, expect, it } from "vitest";
import type { UserRecord } from "../src/domain/model.js";
import { type CallerOptions, outboxRows, problemDetailOf, problemOf, withHeaders } from "./builders.js";
import { acme, foreignUser, t, u, useAcmeUsers, users } from "./users-fixture.js";

useAcmeUsers();

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
