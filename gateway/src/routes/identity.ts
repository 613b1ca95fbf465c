import { entitlementsJson, organizationEtag, organizationJson } from "../mapping/identity.js";
import { defineRoute, type RouteSpec } from "../route.js";
import type { ServiceClients } from "../services.js";

const TAG = "Organizations";
const organization = { $ref: "Organization#" };
const etag = { ETag: 'Weak validator W/"<version>"; send it as If-Match when updating' };

/** The organization endpoints identity serves. */
export function identityRoutes(clients: ServiceClients): RouteSpec[] {
  async function getOrganization(orgId: string, call: Parameters<RouteSpec["handler"]>[0]) {
    const { organization: org } = await clients.organizations.getOrganization({ orgId }, call.callOptions());
    if (!org) throw new Error("identity returned no organization");
    return org;
  }

  return [
    defineRoute({
      method: "GET",
      url: "/organizations/me",
      operationId: "getMyOrganization",
      summary: "The organization of the token (or of the child in X-Platform-Acting-On)",
      tag: TAG,
      scope: "organizations:read",
      tier: "read",
      schema: { response: { 200: organization } },
      headers: etag,
      async handler(call, _request, reply) {
        const org = await getOrganization("", call);
        reply.header("etag", organizationEtag(org));
        return organizationJson(org);
      },
    }),
    defineRoute({
      method: "GET",
      url: "/organizations/:orgId",
      operationId: "getOrganization",
      summary: "One organization; any other than the caller's is 404",
      tag: TAG,
      scope: "organizations:read",
      tier: "read",
      ids: { orgId: "org_" },
      schema: { response: { 200: organization } },
      headers: etag,
      problems: ["organization-not-found"],
      async handler(call, request, reply) {
        const { orgId } = request.params as { orgId: string };
        const org = await getOrganization(orgId, call);
        reply.header("etag", organizationEtag(org));
        return organizationJson(org);
      },
    }),
    defineRoute({
      method: "GET",
      url: "/organizations/me/entitlements",
      operationId: "getMyEntitlements",
      summary: "Feature switches, seats and license tier of the organization",
      tag: TAG,
      scope: "organizations:read",
      tier: "read",
      schema: { response: { 200: { $ref: "Entitlements#" } } },
      headers: { "Cache-Control": "private, max-age=60" },
      async handler(call, _request, reply) {
        const { entitlements } = await clients.organizations.getEntitlements({}, call.callOptions());
        if (!entitlements) throw new Error("identity returned no entitlements");
        reply.header("cache-control", "private, max-age=60");
        return entitlementsJson(entitlements);
      },
    }),
  ];
}
