import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { UserService } from "@platform/contracts/identity";
import { apiContext } from "@platform/kit/connect";
import type { CursorCodec } from "@platform/kit/cursor";
import { newId, parseId } from "@platform/kit/ids";
import { keysetPage } from "@platform/kit/keyset";
import { problem } from "@platform/kit/problems";
import { idempotentWrite, type WriteDeps } from "../application/write.js";
import { normaliseEmail } from "../domain/email.js";
import { userFilters, userSort } from "../domain/listing.js";
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
import type { Store, TxStore } from "../store/index.js";
import { USER_SORT_KEYS } from "../store/user.store.js";

const notFound = (id: string) => problem("user-not-found", `User ${id} was not found.`);

function emailInUse(holder: UserRecord) {
  return problem("email-already-in-use", `${holder.email} is already used by user ${holder.id}.`, {
    existingUserId: holder.id,
  });
}

/** The caller's organization under its row lock: the seat and administrator rules run one at a time. */
async function lockCallerOrg(w: TxStore, orgId: string): Promise<OrganizationRecord> {
  const org = await w.lockOrganization(orgId);
  if (!org) throw problem("organization-not-found", `Organization ${orgId} was not found.`);
  return org;
}

async function checkSeatFor(w: TxStore, org: OrganizationRecord, now: Date): Promise<void> {
  checkSeatAvailable(org.seatTotal, await w.countSeatHolders(org.id, pendingInvitationCutoff(now)));
}

/** The users of the caller's organization (the child's when a partner delegates). */
export function userHandlers(
  deps: WriteDeps & { store: Store; cursors: CursorCodec },
): ServiceImpl<typeof UserService> {
  const { store, clock, cursors } = deps;
  return {
    async listUsers(req, ctx) {
      const { orgId } = apiContext(ctx);
      const since = req.since && timestampDate(req.since);
      const filters = userFilters({ search: req.search, role: req.role, active: req.active, since });
      const page = await keysetPage(cursors, USER_SORT_KEYS, userSort(req.sort), req, (query) =>
        store.listUsers(orgId, { ...query, filters }),
      );
      const now = clock.now();
      return { users: page.items.map((u) => userMessage(u, now, "list")), nextCursor: page.nextCursor ?? "" };
    },

    async getUser(req, ctx) {
      const { orgId } = apiContext(ctx);
      const id = parseId("usr_", req.userId, "userId");
      const user = await store.findUser(orgId, id);
      if (!user) throw notFound(id);
      return { user: userMessage(user, clock.now(), "detail") };
    },

    async inviteUser(req, ctx) {
      const { orgId } = apiContext(ctx);
      const email = normaliseEmail(req.email);
      const profile = invitationProfile(req);
      return idempotentWrite(deps, ctx, UserService.method.inviteUser, req, async (w) => {
        const org = await lockCallerOrg(w, orgId);
        const invitation = { email, role: parseRole(req.role, org), ...profile };
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
    },

    async updateUser(req, ctx) {
      const { orgId } = apiContext(ctx);
      const id = parseId("usr_", req.userId, "userId");
      const patch: UserPatch = req.patch ?? { cleared: [] };
      const text = patchedText(patch);
      return idempotentWrite(deps, ctx, UserService.method.updateUser, req, async (w) => {
        const org = await lockCallerOrg(w, orgId);
        const user = await w.findUser(org.id, id);
        if (!user) throw notFound(id);
        checkExpectedVersion(user.version, req.expectedVersion, "user");
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
    },
  };
}
