import { timestampDate } from "@bufbuild/protobuf/wkt";
import { EVENT_TYPES } from "@platform/kit/events";
import { describe, expect, it } from "vitest";
import {
  type CallerOptions,
  givenOrganization,
  outboxRows,
  problemDetailOf,
  problemOf,
  withHeaders,
} from "./builders.js";
import { acme, DAY_MS, t, u, useAcmeUsers, users } from "./users-fixture.js";

useAcmeUsers();

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
