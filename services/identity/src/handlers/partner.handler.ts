import type { ServiceImpl } from "@connectrpc/connect";
import type { PartnerService } from "@platform/contracts/identity";
import type { Clock } from "@platform/kit/clock";
import { apiContext } from "@platform/kit/connect";
import type { CursorCodec } from "@platform/kit/cursor";
import { keysetPage } from "@platform/kit/keyset";
import { managedFilters, managedSort } from "../domain/listing.js";
import { effectiveScopes } from "../domain/partners.js";
import { pendingInvitationCutoff } from "../domain/seats.js";
import { managedOrganizationMessage } from "../messages.js";
import type { Store } from "../store/index.js";
import { MANAGED_SORT_KEYS } from "../store/partner.store.js";

/** A partner-admin organization's view of the children it manages. */
export function partnerHandlers(deps: {
  store: Store;
  clock: Clock;
  cursors: CursorCodec;
}): ServiceImpl<typeof PartnerService> {
  const { store, clock, cursors } = deps;
  return {
    async listManagedOrganizations(req, ctx) {
      const caller = apiContext(ctx);
      const filters = managedFilters(req);
      const pendingSince = pendingInvitationCutoff(clock.now());
      const page = await keysetPage(cursors, MANAGED_SORT_KEYS, managedSort(req.sort), req, (query) =>
        store.listManagedOrganizations(caller.orgId, { ...query, filters, pendingSince }),
      );
      return {
        organizations: page.items.map((m) =>
          managedOrganizationMessage(m, effectiveScopes(caller.scopes, m.grantedScopes)),
        ),
        nextCursor: page.nextCursor ?? "",
      };
    },
  };
}
