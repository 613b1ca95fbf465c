import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  type ApiToken,
  ApiTokenSchema,
  type DelegationAuditEntry,
  DelegationAuditEntrySchema,
  type Entitlements,
  EntitlementsSchema,
  type ManagedOrganization,
  ManagedOrganizationSchema,
  type Organization,
  OrganizationSchema,
  type OrganizationSummary,
  OrganizationSummarySchema,
  type PartnerRelationship,
  PartnerRelationshipSchema,
  type User,
  UserSchema,
} from "@platform/contracts/identity";
import type { Scope } from "@platform/kit/scopes";
import { type EntitlementsView, licenseTier } from "./domain/entitlements.js";
import type { PartnerRelationshipRecord, TokenRecord } from "./domain/model.js";
import { invitationStatus, seats } from "./domain/seats.js";
import type {
  DelegationAuditEntry as AuditEntryRecord,
  ManagedOrganizationRow,
  OrganizationListItem,
  OrganizationView,
  UserView,
} from "./store/index.js";

// Records to proto messages; unset optional fields stay unset (the gateway renders null).

const ts = (d: Date | null) => (d ? timestampFromDate(d) : undefined);
const opt = (v: string | null) => v ?? undefined;

export function organizationMessage(org: OrganizationView): Organization {
  return create(OrganizationSchema, {
    id: org.id,
    name: org.name,
    primaryEmailDomain: org.primaryEmailDomain,
    emailDomains: org.emailDomains,
    administrator: { userId: org.administratorUserId, displayName: org.administratorDisplayName },
    industry: org.industry,
    employeeCount: org.employeeCount,
    logoUrl: org.logoUrl ?? undefined,
    sourceRefs: { crm: org.crmOrgId ? { orgId: org.crmOrgId } : undefined },
    createTime: timestampFromDate(org.createdAt),
    updateTime: timestampFromDate(org.updatedAt),
    version: BigInt(org.version),
  });
}

export function entitlementsMessage(e: EntitlementsView): Entitlements {
  return create(EntitlementsSchema, {
    orgId: e.orgId,
    features: e.features,
    seats: e.seats,
    licenseTier: e.licenseTier,
    asOf: timestampFromDate(e.asOf),
  });
}

export function tokenMessage(t: TokenRecord): ApiToken {
  return create(ApiTokenSchema, {
    id: t.id,
    orgId: t.orgId,
    name: t.name,
    scopes: t.scopes,
    keyPreview: t.keyPreview,
    expireTime: ts(t.expiresAt),
    revokeTime: ts(t.revokedAt),
    createTime: timestampFromDate(t.createdAt),
  });
}

export function organizationSummaryMessage(o: OrganizationListItem): OrganizationSummary {
  return create(OrganizationSummarySchema, {
    id: o.id,
    name: o.name,
    partnerAdmin: o.partnerAdmin,
    parentOrgId: o.parentOrgId ?? "",
  });
}

export function relationshipMessage(r: PartnerRelationshipRecord): PartnerRelationship {
  return create(PartnerRelationshipSchema, {
    parentOrgId: r.parentOrgId,
    childOrgId: r.childOrgId,
    grantedScopes: r.grantedScopes,
    createTime: timestampFromDate(r.createdAt),
    updateTime: timestampFromDate(r.updatedAt),
    revokeTime: ts(r.revokedAt),
  });
}

/**
 * A user as of `now` (the invitation status is derived from the clock). The list view
 * leaves the detail-only fields unset: phone number, inviter, invitation time, 2FA, CRM id.
 */
export function userMessage(u: UserView, now: Date, view: "list" | "detail"): User {
  const listed = {
    id: u.id,
    orgId: u.orgId,
    email: u.email,
    firstName: opt(u.firstName),
    lastName: opt(u.lastName),
    displayName: u.displayName,
    title: opt(u.title),
    department: opt(u.department),
    profileImageUrl: opt(u.profileImageUrl),
    role: u.role,
    active: u.active,
    invitationStatus: invitationStatus(u, now),
    lastLoginTime: ts(u.lastLoginAt),
    createTime: timestampFromDate(u.createdAt),
    updateTime: timestampFromDate(u.updatedAt),
    version: BigInt(u.version),
  };
  if (view === "list") return create(UserSchema, listed);
  return create(UserSchema, {
    ...listed,
    phoneNumber: opt(u.phoneNumber),
    // Unset for a user nobody invited (an organization's first administrator).
    invitedBy:
      u.invitedByDisplayName === null
        ? undefined
        : { userId: u.invitedByUserId ?? "", displayName: u.invitedByDisplayName },
    inviteTime: ts(u.invitedAt),
    twoFactorEnabled: u.twoFactorEnabled,
    crmUserId: opt(u.crmUserId),
  });
}

/** A child as its partner sees it, with what the partner's token can exercise on it. */
export function managedOrganizationMessage(m: ManagedOrganizationRow, grantedScopes: Scope[]): ManagedOrganization {
  return create(ManagedOrganizationSchema, {
    id: m.org.id,
    name: m.org.name,
    primaryEmailDomain: m.org.primaryEmailDomain,
    industry: m.org.industry,
    licenseTier: licenseTier(m.org.licenseTier),
    seats: seats(m.org.seatTotal, m.seatsUsed),
    grantedScopes,
    hasActiveIssues: m.org.hasActiveIssues,
    relationshipCreateTime: timestampFromDate(m.relationshipCreatedAt),
    updateTime: timestampFromDate(m.updatedAt),
  });
}

export function delegationAuditMessage(e: AuditEntryRecord): DelegationAuditEntry {
  return create(DelegationAuditEntrySchema, { ...e, time: timestampFromDate(e.time) });
}
