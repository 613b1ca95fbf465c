import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import {
  type Entitlements,
  FEATURE_KEYS,
  type LicenseTier,
  type ManagedOrganization,
  type Organization,
  type Seats,
  type User,
  UserPatchSchema,
} from "@platform/contracts/identity";
import { iso, isoOrNull, nullsWhenUnset, timestampsJson } from "@platform/contracts/rest/json";
import { problem } from "@platform/kit/problems";
import { parseInstant } from "./time.js";

// Fields the contract always sets: their absence is a service bug, so a plain Error, which
// the error handler logs and answers with an opaque 500.

/** The weak validator of a resource's optimistic-concurrency version, as GET and PATCH send it. */
export function versionEtag(resource: { version: bigint }): string {
  return `W/"${resource.version}"`;
}

export function organizationJson(o: Organization) {
  if (!o.administrator) throw new Error("identity returned no administrator");
  return {
    id: o.id,
    name: o.name,
    primaryEmailDomain: o.primaryEmailDomain,
    emailDomains: o.emailDomains,
    administrator: { userId: o.administrator.userId, displayName: o.administrator.displayName },
    industry: o.industry,
    employeeCount: o.employeeCount,
    logoUrl: o.logoUrl ?? null,
    sourceRefs: o.sourceRefs?.crm ? { crm: { orgId: o.sourceRefs.crm.orgId } } : {},
    ...timestampsJson(o),
  };
}

// An organization's seats and license tier, as its entitlements and its partner's view show them.
const seatsJson = (s: Seats | undefined) => ({
  total: s?.total ?? 0,
  used: s?.used ?? 0,
  available: s?.available ?? 0,
});
const licenseTierJson = (t: LicenseTier | undefined) => ({ slug: t?.slug ?? "", name: t?.name ?? "" });

export function entitlementsJson(e: Entitlements) {
  const f = e.features;
  return {
    orgId: e.orgId,
    // The contract's key list, as the schema's: a feature the message leaves unset is off.
    features: Object.fromEntries(FEATURE_KEYS.map((key) => [key, f?.[key] ?? false])),
    seats: seatsJson(e.seats),
    licenseTier: licenseTierJson(e.licenseTier),
    asOf: iso(e.asOf, "as_of"),
  };
}

/** A user in a list: the fields both views share. */
export function userListItemJson(u: User) {
  return {
    id: u.id,
    orgId: u.orgId,
    email: u.email,
    ...nullsWhenUnset(u, "firstName", "lastName"),
    displayName: u.displayName,
    ...nullsWhenUnset(u, "title", "department", "profileImageUrl"),
    role: u.role,
    active: u.active,
    invitationStatus: u.invitationStatus,
    lastLoginAt: isoOrNull(u.lastLoginTime),
    ...timestampsJson(u),
  };
}

/** The detail view of a user. */
export function userJson(u: User) {
  return {
    ...userListItemJson(u),
    phoneNumber: u.phoneNumber ?? null,
    // identity leaves user_id empty when an API token sent the invitation.
    invitedBy: u.invitedBy ? { userId: u.invitedBy.userId || null, displayName: u.invitedBy.displayName } : null,
    invitedAt: isoOrNull(u.inviteTime),
    twoFactorEnabled: u.twoFactorEnabled,
    sourceRefs: u.crmUserId ? { crm: { userId: u.crmUserId } } : {},
  };
}

export function managedOrganizationJson(m: ManagedOrganization) {
  return {
    id: m.id,
    name: m.name,
    primaryEmailDomain: m.primaryEmailDomain,
    industry: m.industry,
    licenseTier: licenseTierJson(m.licenseTier),
    seats: seatsJson(m.seats),
    grantedScopes: m.grantedScopes,
    hasActiveIssues: m.hasActiveIssues,
    relationshipCreatedAt: iso(m.relationshipCreateTime, "relationship_create_time"),
    updatedAt: iso(m.updateTime, "update_time"),
  };
}

/** The body of PATCH /organizations/{orgId}, as its schema admits it: the proto's own field names. */
export interface OrganizationPatchBody {
  name?: string;
  primaryEmailDomain?: string;
  industry?: string;
  employeeCount?: number;
}

/** The body of POST /users, as its schema admits it: the proto's own field names. */
export interface UserInviteBody {
  email: string;
  role: string;
  firstName?: string;
  lastName?: string;
  title?: string;
  department?: string;
}

const CLEARABLE = ["firstName", "lastName", "title", "department", "phoneNumber"] as const;

/** The body of PATCH /users/{userId}, as its schema admits it: null clears a text field. */
export type UserPatchBody = { [K in (typeof CLEARABLE)[number]]?: string | null } & { role?: string; active?: boolean };

/**
 * Proto3 cannot carry "set to null" in an optional string, so each field sent as null is
 * named in `cleared` by its proto field name (first_name, …), as the contract lists them.
 */
export function userPatch(body: UserPatchBody): MessageInitShape<typeof UserPatchSchema> {
  const patch: MessageInitShape<typeof UserPatchSchema> & { cleared: string[] } = { cleared: [] };
  for (const name of CLEARABLE) {
    const value = body[name];
    if (value === null) patch.cleared.push(UserPatchSchema.field[name]!.name);
    else if (value !== undefined) patch[name] = value;
  }
  if (body.role !== undefined) patch.role = body.role;
  if (body.active !== undefined) patch.active = body.active;
  return patch;
}

/** An ISO 8601 date or date-time query filter; a date alone means its start in UTC. */
export function timestampFilter(name: string, raw: string): Timestamp {
  const instant = parseInstant(raw, { allowDate: true });
  if (!instant) {
    throw problem(
      "invalid-filter",
      `Query parameter '${name}' must be an ISO 8601 date or date-time with a zone, e.g. 2026-01-15T09:30:00Z.`,
      { field: name },
    );
  }
  return instant;
}
