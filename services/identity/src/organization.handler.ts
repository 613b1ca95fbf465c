import type { ServiceImpl } from "@connectrpc/connect";
import type { OrganizationService } from "@platform/contracts/identity";
import type { Clock } from "@platform/kit/clock";
import { apiContext } from "@platform/kit/connect";
import { problem } from "@platform/kit/problems";
import { shapeEntitlements } from "./domain/entitlements.js";
import { pendingInvitationCutoff } from "./domain/seats.js";
import { visibleOrgId } from "./domain/visibility.js";
import { entitlementsMessage, organizationMessage } from "./proto.js";
import type { IdentityReads } from "./store/identity.store.js";

/** The organization resources of the public API, always within the caller's org context. */
export function organizationHandlers(store: IdentityReads, clock: Clock): ServiceImpl<typeof OrganizationService> {
  const loadOrg = async (id: string) => {
    const org = await store.findOrganization(id);
    if (!org) throw problem("organization-not-found", `Organization ${id} was not found.`);
    return org;
  };
  return {
    async getOrganization(req, ctx) {
      const org = await loadOrg(visibleOrgId(req.orgId, apiContext(ctx).orgId));
      return { organization: organizationMessage(org) };
    },
    async getEntitlements(_req, ctx) {
      const org = await loadOrg(apiContext(ctx).orgId);
      const used = await store.countSeatHolders(org.id, pendingInvitationCutoff(clock.now()));
      return { entitlements: entitlementsMessage(shapeEntitlements(org, used)) };
    },
  };
}
