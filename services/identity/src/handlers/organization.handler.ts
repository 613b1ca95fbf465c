import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { GetOrganizationResponseSchema, OrganizationService } from "@platform/contracts/identity";
import { apiContext } from "@platform/kit/connect";
import { reusableResponses } from "@platform/kit/reusable-response";
import { loadOrganization, organizationEntitlements, updateOrganization } from "../application/organizations.js";
import { idempotentWrite, type WriteDeps } from "../application/write.js";
import { visibleOrgId } from "../domain/visibility.js";
import { organizationMessage } from "../messages.js";
import type { OrganizationView, Store } from "../store/index.js";

/** The organization resources of the public API, always within the caller's org context. */
export function organizationHandlers(deps: WriteDeps & { store: Store }): ServiceImpl<typeof OrganizationService> {
  const { store, clock } = deps;
  // One response per organization the cache holds (the store's cache hands out the same view
  // until it reads again): built and encoded once, not on every GET /organizations/me.
  const organizationResponse = reusableResponses((org: OrganizationView) =>
    create(GetOrganizationResponseSchema, { organization: organizationMessage(org) }),
  );
  return {
    async getOrganization(req, ctx) {
      const org = await loadOrganization(store, visibleOrgId(req.orgId, apiContext(ctx).orgId));
      return organizationResponse(org);
    },
    async getEntitlements(_req, ctx) {
      return { entitlements: await organizationEntitlements(store, clock, apiContext(ctx).orgId) };
    },
    updateOrganization: async (req, ctx) =>
      updateOrganization(
        clock,
        {
          orgId: visibleOrgId(req.orgId, apiContext(ctx).orgId),
          patch: {
            name: req.name,
            primaryEmailDomain: req.primaryEmailDomain,
            industry: req.industry,
            employeeCount: req.employeeCount,
          },
          expectedVersion: req.expectedVersion,
        },
        (change) => idempotentWrite(deps, ctx, OrganizationService.method.updateOrganization, req, change),
      ),
  };
}
