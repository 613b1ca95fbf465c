import type { User } from "@platform/contracts/identity";
import type { Clock } from "@platform/kit/clock";
import { newId } from "@platform/kit/ids";
import { problem } from "@platform/kit/problems";
import { normaliseEmail } from "../domain/email.js";
import type { OrganizationRecord, UserRecord } from "../domain/model.js";
import { invitationStatus, pendingInvitationCutoff } from "../domain/seats.js";
import {
  applyUserPatch,
  checkAdministratorRules,
  checkSeatAvailable,
  holdsSeat,
  invitationProfile,
  invitedUser,
  parseRole,
  patchedText,
  renewedInvitation,
  type UserPatch,
} from "../domain/users.js";
import { checkExpectedVersion } from "../domain/versions.js";
import { userInvitedEvent, userUpdatedEvent } from "../events/outbox-events.js";
import { userMessage } from "../messages.js";
import type { TxStore } from "../store/index.js";
import { organizationNotFound } from "./organizations.js";

// The user use cases: inviting a user (or renewing an expired invitation) and changing one,
// each under the row lock of the caller's organization, where the seat and administrator rules
// are checked. The handlers map the RPCs onto these and open the write the call's
// Idempotency-Key guards.

export const userNotFound = (id: string) => problem("user-not-found", `User ${id} was not found.`);

function emailInUse(holder: UserRecord) {
  return problem("email-already-in-use", `${holder.email} is already used by user ${holder.id}.`, {
    existingUserId: holder.id,
  });
}

/** The caller's organization under its row lock: the seat and administrator rules run one at a time. */
async function lockCallerOrg(w: TxStore, orgId: string): Promise<OrganizationRecord> {
  const org = await w.lockOrganization(orgId);
  if (!org) throw organizationNotFound(orgId);
  return org;
}

async function checkSeatFor(w: TxStore, org: OrganizationRecord, now: Date): Promise<void> {
  checkSeatAvailable(org.seatTotal, await w.countSeatHolders(org.id, pendingInvitationCutoff(now)));
}

/**
 * The write a user's change goes out in, opened by the caller for the call (once per
 * Idempotency-Key): `change` runs in it, and what the write answers is the use case's answer.
 */
export type UserWrite<R> = (change: (w: TxStore) => Promise<{ user: User }>) => Promise<R>;

/** POST /users as sent: the address and role unchecked, the optional profile fields. */
export interface NewInvitation {
  orgId: string;
  email: string;
  role: string;
  firstName: string | undefined;
  lastName: string | undefined;
  title: string | undefined;
  department: string | undefined;
}

/**
 * Invites a user. The address and profile are checked before the write; in it, under the
 * organization's row lock, the role, the address's holder and a free seat. An address whose
 * invitation expired is renewed (same user) rather than invited twice; user.invited is enqueued.
 */
export async function inviteUser<R>(clock: Clock, cmd: NewInvitation, write: UserWrite<R>): Promise<R> {
  const { orgId } = cmd;
  const email = normaliseEmail(cmd.email);
  const profile = invitationProfile(cmd);
  return write(async (w) => {
    const org = await lockCallerOrg(w, orgId);
    const invitation = { email, role: parseRole(cmd.role, org), ...profile };
    const now = clock.now();
    // An expired invitation still holds the address (the user row stays active); inviting again renews it.
    const holder = await w.findActiveUserByEmail(org.id, email);
    if (holder && invitationStatus(holder, now) !== "expired") throw emailInUse(holder);
    await checkSeatFor(w, org, now);
    let user: UserRecord;
    if (holder) {
      user = renewedInvitation(holder, invitation, org, now);
      await w.updateUser(user);
    } else {
      user = invitedUser(invitation, org, newId("usr_"), now);
      await w.insertUser(user);
    }
    await w.enqueue(userInvitedEvent(user));
    return { user: userMessage({ ...user, invitedByDisplayName: user.invitedByName }, now, "detail") };
  });
}

/** A PATCH of a user: the contract's patch and the version its If-Match names. */
export interface UserChange {
  orgId: string;
  id: string;
  patch: UserPatch;
  expectedVersion: bigint;
}

/**
 * Changes a user. The patch's text is checked before the write; in it, under the organization's
 * row lock, the version, the role, the administrator rules and, when the user is reactivated,
 * its address and a seat; user.updated is enqueued.
 */
export async function updateUser<R>(clock: Clock, cmd: UserChange, write: UserWrite<R>): Promise<R> {
  const { orgId, id, patch } = cmd;
  const text = patchedText(patch);
  return write(async (w) => {
    const org = await lockCallerOrg(w, orgId);
    const user = await w.findUser(org.id, id);
    if (!user) throw userNotFound(id);
    checkExpectedVersion(user.version, cmd.expectedVersion, "user");
    const role = patch.role === undefined ? undefined : parseRole(patch.role, org);
    const now = clock.now();
    const { next, changedFields } = applyUserPatch(user, text, role, patch.active, now);
    checkAdministratorRules(user, next, org, await w.countOtherAdministrators(org.id, user.id));
    if (!user.active && next.active) {
      // The address may have been invited again while this user was deactivated.
      const holder = await w.findActiveUserByEmail(org.id, user.email);
      if (holder) throw emailInUse(holder);
      if (holdsSeat(next, now)) await checkSeatFor(w, org, now);
    }
    await w.updateUser(next);
    await w.enqueue(userUpdatedEvent(next, changedFields));
    return { user: userMessage({ ...next, invitedByDisplayName: user.invitedByDisplayName }, now, "detail") };
  });
}
