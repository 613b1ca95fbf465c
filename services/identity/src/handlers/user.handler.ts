import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { UserService } from "@platform/contracts/identity";
import { apiContext } from "@platform/kit/connect";
import type { CursorCodec } from "@platform/kit/cursor";
import { parseId } from "@platform/kit/ids";
import { keysetPage } from "@platform/kit/keyset";
import { inviteUser, updateUser, userNotFound } from "../application/users.js";
import { idempotentWrite, type WriteDeps } from "../application/write.js";
import { userFilters, userSort } from "../domain/listing.js";
import { userMessage } from "../messages.js";
import type { Store } from "../store/index.js";
import { USER_SORT_KEYS } from "../store/user.store.js";

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
      if (!user) throw userNotFound(id);
      return { user: userMessage(user, clock.now(), "detail") };
    },

    inviteUser: async (req, ctx) =>
      inviteUser(
        clock,
        {
          orgId: apiContext(ctx).orgId,
          email: req.email,
          role: req.role,
          firstName: req.firstName,
          lastName: req.lastName,
          title: req.title,
          department: req.department,
        },
        (invite) => idempotentWrite(deps, ctx, UserService.method.inviteUser, req, invite),
      ),

    updateUser: async (req, ctx) =>
      updateUser(
        clock,
        {
          orgId: apiContext(ctx).orgId,
          id: parseId("usr_", req.userId, "userId"),
          patch: req.patch ?? { cleared: [] },
          expectedVersion: req.expectedVersion,
        },
        (change) => idempotentWrite(deps, ctx, UserService.method.updateUser, req, change),
      ),
  };
}
