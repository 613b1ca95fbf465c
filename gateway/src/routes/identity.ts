import type { CallOptions } from "@connectrpc/connect";
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
import { type ApiCall, defineRoute, type RouteSpec } from "../route.js";
import { type JsonSchema, str } from "../schemas/common.js";
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
import { pageQuery } from "../schemas/pagination.js";
import type { ServiceClients } from "../services.js";
import { getById, listOf, requiredFrom, textFilters } from "./shared.js";

const organization = { $ref: "Organization#" };
const user = { $ref: "User#" };
const etag = { ETag: 'Weak validator W/"<version>"; send it as If-Match when updating' };
const freshEtag = { ETag: 'The new W/"<version>" after the change' };

/**
 * An update under optimistic concurrency of the resource the path's id names: a write whose
 * If-Match names the version it changes, answered with the resource and its new ETag. `update`
 * gets the id with that expected version, and the body.
 */
function versionedPatch<K extends string, B, R extends { version: bigint }>(of: {
  ids: Record<K, string>;
  body: JsonSchema;
  response: JsonSchema;
  update(target: Record<K, string> & { expectedVersion: bigint }, body: B, options: CallOptions): Promise<R>;
  toJson(resource: R): unknown;
}): Pick<RouteSpec, "method" | "tier" | "idempotencyKey" | "ifMatch" | "headers" | "ids" | "schema" | "handler"> {
  return {
    method: "PATCH",
    tier: "write",
    idempotencyKey: "required",
    ifMatch: "required",
    headers: freshEtag,
    ids: of.ids,
    schema: { body: of.body, response: { 200: of.response } },
    async handler(call, request, reply) {
      const target = { ...(request.params as Record<K, string>), expectedVersion: version(call) };
      return versionedJson(reply, await of.update(target, request.body as B, call.callOptions()), of.toJson);
    },
  };
}

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

type ManagedQuery = { search?: string; industry?: string; licenseTier?: string; hasActiveIssues?: boolean };

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
      url: "/organizations/:orgId",
      operationId: "updateOrganization",
      summary: "Update the organization (partial merge; If-Match required)",
      tag: "Organizations",
      scope: "organizations:write",
      readOnlyTokenProblem: "write-scope-required",
      notWritable: NOT_WRITABLE_ORGANIZATION,
      problems: ["organization-not-found", "email-domain-not-verified"],
      ...versionedPatch({
        ids: { orgId: "org_" },
        body: organizationPatchSchema,
        response: organization,
        async update(target, body: OrganizationPatchBody, options) {
          const res = await clients.organizations.updateOrganization({ ...target, ...body }, options);
          return required(res.organization, "organization");
        },
        toJson: organizationJson,
      }),
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
      ...listOf(usersPage, "UserListItem", {
        list: (page, q: { search?: string; role?: string; active: string; since?: string }, options) =>
          clients.users.listUsers(
            {
              ...page,
              ...textFilters(q, "search", "role"),
              active: q.active,
              ...(q.since !== undefined ? { since: timestampFilter("since", q.since) } : {}),
            },
            options,
          ),
        items: (res) => res.users,
        toJson: userListItemJson,
      }),
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
      url: "/users/:userId",
      operationId: "updateUser",
      summary: "Update a user (partial merge; null clears a text field; If-Match required)",
      tag: "Users",
      scope: "users:write",
      notWritable: NOT_WRITABLE_USER,
      problems: ["invalid-role", "user-not-found", "last-administrator", "administrator-transfer-required"],
      ...versionedPatch({
        ids: { userId: "usr_" },
        body: userPatchSchema,
        response: user,
        async update(target, body: UserPatchBody, options) {
          const res = await clients.users.updateUser({ ...target, patch: userPatch(body) }, options);
          return required(res.user, "user");
        },
        toJson: userJson,
      }),
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
      ...listOf(managedPage, "ManagedOrganization", {
        list: (page, q: ManagedQuery, options) =>
          clients.partners.listManagedOrganizations(
            {
              ...page,
              ...textFilters(q, "search", "industry", "licenseTier"),
              ...(q.hasActiveIssues !== undefined ? { hasActiveIssues: q.hasActiveIssues } : {}),
            },
            options,
          ),
        items: (res) => res.organizations,
        toJson: managedOrganizationJson,
      }),
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
