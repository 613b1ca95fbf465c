import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { GetOrganizationResponseSchema, OrganizationService } from "@platform/contracts/identity";
import { apiContext } from "@platform/kit/connect";
import { problem } from "@platform/kit/problems";
import { reusableResponses } from "@platform/kit/reusable-response";
import { idempotentWrite, type WriteDeps } from "../application/write.js";
import { shapeEntitlements } from "../domain/entitlements.js";
import { applyOrganizationPatch, validateOrganizationPatch } from "../domain/organizations.js";
import { pendingInvitationCutoff } from "../domain/seats.js";
import { checkExpectedVersion } from "../domain/versions.js";
import { visibleOrgId } from "../domain/visibility.js";
import { organizationUpdatedEvent } from "../events/outbox-events.js";
import { entitlementsMessage, organizationMessage } from "../messages.js";
import type { OrganizationStore, OrganizationView, Store } from "../store/index.js";

const notFound = (id: string) => problem("organization-not-found", `Organization ${id} was not found.`);

/** The organization resources of the public API, always within the caller's org context. */
export function organizationHandlers(deps: WriteDeps & { store: Store }): ServiceImpl<typeof OrganizationService> {
  const { store, clock } = deps;
  const loadOrg = async (reads: OrganizationStore, id: string) => {
    const org = await reads.findOrganization(id);
    if (!org) throw notFound(id);
    return org;
  };
  // One response per organization the cache holds (the store's cache hands out the same view
  // until it reads again): built and encoded once, not on every GET /organizations/me.
  const organizationResponse = reusableResponses((org: OrganizationView) =>
    create(GetOrganizationResponseSchema, { organization: organizationMessage(org) }),
  );
  return {
    async getOrganization(req, ctx) {
      const org = await loadOrg(store, visibleOrgId(req.orgId, apiContext(ctx).orgId));
      return organizationResponse(org);
    },
    async getEntitlements(_req, ctx) {
      const org = await loadOrg(store, apiContext(ctx).orgId);
      const used = await store.countSeatHolders(org.id, pendingInvitationCutoff(clock.now()));
      return { entitlements: entitlementsMessage(shapeEntitlements(org, used)) };
    },
    async updateOrganization(req, ctx) {
      const orgId = visibleOrgId(req.orgId, apiContext(ctx).orgId);
      const patch = validateOrganizationPatch(req);
      return idempotentWrite(deps, ctx, OrganizationService.method.updateOrganization, req, async (w) => {
        const org = await w.lockOrganization(orgId);
        if (!org) throw notFound(orgId);
        checkExpectedVersion(org.version, req.expectedVersion, "organization");
        const { next, changedFields } = applyOrganizationPatch(org, patch, clock.now());
        await w.updateOrganization(next);
        await w.enqueue(organizationUpdatedEvent(next, changedFields));
        return { organization: organizationMessage(await loadOrg(w, orgId)) };
      });
    },
  };
}
