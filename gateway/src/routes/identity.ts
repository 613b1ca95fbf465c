import type { FastifyReply } from "fastify";
import {
  entitlementsJson,
  managedOrganizationJson,
  type OrganizationPatchBody,
  organizationJson,
  timestampFilter,
  type UserInviteBody,
  type UserPatchBody,
  userJson,
  userListItemJson,
  userPatch,
  versionEtag,
} from "../mapping/identity.js";
import { type ApiCall, defineRoute, type JsonSchema, type RouteSpec } from "../route.js";
import { str } from "../schemas/common.js";
import {
  entitlementsSchema,
  managedOrganizationSchema,
  organizationPatchSchema,
  organizationSchema,
  userInviteSchema,
  userListItemSchema,
  userPatchSchema,
  userSchema,
} from "../schemas/identity.js";
import { type PageQuery, pageQuery, pageRequest } from "../schemas/pagination.js";
import type { ServiceClients } from "../services.js";
import { getById, getList, pageJson, requiredFrom } from "./shared.js";

const organization = { $ref: "Organization#" };
const user = { $ref: "User#" };
const etag = { ETag: 'Weak validator W/"<version>"; send it as If-Match when updating' };
const freshEtag = { ETag: 'The new W/"<version>" after the change' };

/** An update under optimistic concurrency: a write whose If-Match names the version it changes, answered with the new ETag. */
const versionedPatch = {
  method: "PATCH",
  tier: "write",
  idempotencyKey: "required",
  ifMatch: "required",
  headers: freshEtag,
} as const;

const usersPage = pageQuery(["updatedAt", "createdAt", "lastLoginAt", "email", "firstName", "lastName"], "-createdAt", {
  search: str("Case-insensitive substring of email, firstName, lastName or displayName"),
  // Role and active are judged by identity, so a bad value is its 400 invalid-filter, not a schema error here.
  role: str("User, Admin or Partner Admin"),
  active: { ...str("true (active users), false (deactivated only) or all"), default: "true" },
  since: { ...str("ISO 8601; users with updatedAt at or after it"), format: "date-time" },
});

const managedPage = pageQuery(["updatedAt", "createdAt", "name", "seats.total"], "-updatedAt", {
  search: str("Case-insensitive substring of the name"),
  industry: str("Exact industry"),
  licenseTier: str("starter, professional or enterprise"),
  hasActiveIssues: { type: "boolean" },
});

const NOT_WRITABLE_ORGANIZATION = {
  administrator: "administrator is the contractual owner and cannot be changed through the API.",
  sourceRefs: "sourceRefs are maintained by the integrations and cannot be written through the API.",
  emailDomains:
    "emailDomains cannot be written: domains cannot be added through the API, and primaryEmailDomain must be one already verified.",
};

const NOT_WRITABLE_USER = {
  email: "email is not mutable through the API.",
};

/** The resource as JSON, its version in the ETag header (the If-Match of its next update). */
function versionedJson<R extends { version: bigint }>(
  reply: FastifyReply,
  resource: R,
  toJson: (resource: R) => unknown,
) {
  reply.header("etag", versionEtag(resource));
  return toJson(resource);
}

// A response without the resource it exists for is a service bug: a plain Error, which the
// error handler logs and answers with an opaque 500.
const required = requiredFrom("identity");

/** The If-Match version the guard parsed, on routes that declare `ifMatch: "required"`. */
function version(call: ApiCall): bigint {
  if (call.expectedVersion === undefined) throw new Error("route without ifMatch asked for the If-Match version");
  return call.expectedVersion;
}

/** The organization, user and partner endpoints identity serves. */
export function routes({ identity: clients }: ServiceClients): RouteSpec[] {
  async function getOrganization(orgId: string, call: ApiCall) {
    const res = await clients.organizations.getOrganization({ orgId }, call.callOptions());
    return required(res.organization, "organization");
  }

  const organizations: RouteSpec[] = [
    defineRoute({
      method: "GET",
      url: "/organizations/me",
      operationId: "getMyOrganization",
      summary: "The organization of the token (or of the child in X-Platform-Acting-On)",
      tag: "Organizations",
      scope: "organizations:read",
      tier: "read",
      schema: { response: { 200: organization } },
      headers: etag,
      async handler(call, _request, reply) {
        return versionedJson(reply, await getOrganization("", call), organizationJson);
      },
    }),
    defineRoute({
      url: "/organizations/:orgId",
      operationId: "getOrganization",
      summary: "One organization; any other than the caller's is 404",
      tag: "Organizations",
      scope: "organizations:read",
      headers: etag,
      problems: ["organization-not-found"],
      ...getById("orgId", "org_", "Organization", async ({ orgId }, call, reply) => {
        return versionedJson(reply, await getOrganization(orgId, call), organizationJson);
      }),
    }),
    defineRoute({
      ...versionedPatch,
      url: "/organizations/:orgId",
      operationId: "updateOrganization",
      summary: "Update the organization (partial merge; If-Match required)",
      tag: "Organizations",
      scope: "organizations:write",
      readOnlyTokenProblem: "write-scope-required",
      ids: { orgId: "org_" },
      schema: { body: organizationPatchSchema, response: { 200: organization } },
      notWritable: NOT_WRITABLE_ORGANIZATION,
      problems: ["organization-not-found", "email-domain-not-verified"],
      async handler(call, request, reply) {
        const { orgId } = request.params as { orgId: string };
        const res = await clients.organizations.updateOrganization(
          { orgId, expectedVersion: version(call), ...(request.body as OrganizationPatchBody) },
          call.callOptions(),
        );
        return versionedJson(reply, required(res.organization, "organization"), organizationJson);
      },
    }),
    defineRoute({
      method: "GET",
      url: "/organizations/me/entitlements",
      operationId: "getMyEntitlements",
      summary: "Feature switches, seats and license tier of the organization",
      tag: "Organizations",
      scope: "organizations:read",
      tier: "read",
      schema: { response: { 200: { $ref: "Entitlements#" } } },
      headers: { "Cache-Control": "private, max-age=60" },
      async handler(call, _request, reply) {
        const { entitlements } = await clients.organizations.getEntitlements({}, call.callOptions());
        reply.header("cache-control", "private, max-age=60");
        return entitlementsJson(required(entitlements, "entitlements"));
      },
    }),
  ];

  const users: RouteSpec[] = [
    defineRoute({
      url: "/users",
      operationId: "listUsers",
      summary: "List users (list view)",
      tag: "Users",
      scope: "users:read",
      ...getList(usersPage, "UserListItem"),
      async handler(call, request) {
        const query = request.query as PageQuery & { search?: string; role?: string; active: string; since?: string };
        const res = await clients.users.listUsers(
          {
            ...pageRequest(usersPage.page, query),
            search: query.search ?? "",
            role: query.role ?? "",
            active: query.active,
            ...(query.since !== undefined ? { since: timestampFilter("since", query.since) } : {}),
          },
          call.callOptions(),
        );
        return pageJson(res.users, userListItemJson, res.nextCursor);
      },
    }),
    defineRoute({
      url: "/users/:userId",
      operationId: "getUser",
      summary: "One user (detail view)",
      tag: "Users",
      scope: "users:read",
      headers: etag,
      problems: ["user-not-found"],
      ...getById("userId", "usr_", "User", async (id, call, reply) => {
        const res = await clients.users.getUser(id, call.callOptions());
        return versionedJson(reply, required(res.user, "user"), userJson);
      }),
    }),
    defineRoute({
      method: "POST",
      url: "/users",
      operationId: "inviteUser",
      summary: "Invite a user (pending until the invitation is accepted)",
      tag: "Users",
      scope: "users:write",
      tier: "write",
      idempotencyKey: "required",
      schema: { body: userInviteSchema, response: { 201: user } },
      headers: etag,
      problems: ["invalid-email", "invalid-role", "seat-limit-exceeded", "email-already-in-use"],
      async handler(call, request, reply) {
        const res = await clients.users.inviteUser(request.body as UserInviteBody, call.callOptions());
        const invited = required(res.user, "user");
        reply.code(201);
        return versionedJson(reply, invited, userJson);
      },
    }),
    defineRoute({
      ...versionedPatch,
      url: "/users/:userId",
      operationId: "updateUser",
      summary: "Update a user (partial merge; null clears a text field; If-Match required)",
      tag: "Users",
      scope: "users:write",
      ids: { userId: "usr_" },
      schema: { body: userPatchSchema, response: { 200: user } },
      notWritable: NOT_WRITABLE_USER,
      problems: ["invalid-role", "user-not-found", "last-administrator", "administrator-transfer-required"],
      async handler(call, request, reply) {
        const { userId } = request.params as { userId: string };
        const res = await clients.users.updateUser(
          { userId, expectedVersion: version(call), patch: userPatch(request.body as UserPatchBody) },
          call.callOptions(),
        );
        return versionedJson(reply, required(res.user, "user"), userJson);
      },
    }),
  ];

  const partner: RouteSpec[] = [
    defineRoute({
      url: "/partner/managed-organizations",
      operationId: "listManagedOrganizations",
      summary: "Child organizations this partner token can act on",
      tag: "Partner delegation",
      scope: "partner:act-as-child",
      actingOn: "forbidden",
      ...getList(managedPage, "ManagedOrganization"),
      async handler(call, request) {
        const query = request.query as PageQuery & {
          search?: string;
          industry?: string;
          licenseTier?: string;
          hasActiveIssues?: boolean;
        };
        const res = await clients.partners.listManagedOrganizations(
          {
            ...pageRequest(managedPage.page, query),
            search: query.search ?? "",
            industry: query.industry ?? "",
            licenseTier: query.licenseTier ?? "",
            ...(query.hasActiveIssues !== undefined ? { hasActiveIssues: query.hasActiveIssues } : {}),
          },
          call.callOptions(),
        );
        return pageJson(res.organizations, managedOrganizationJson, res.nextCursor);
      },
    }),
  ];

  return [...organizations, ...users, ...partner];
}

export const schemas: readonly JsonSchema[] = [
  organizationSchema,
  entitlementsSchema,
  userSchema,
  userListItemSchema,
  managedOrganizationSchema,
];
