import type { Row } from "@platform/kit/db";
import type { Scope } from "@platform/kit/scopes";
import type {
  FeatureSet,
  LicenseTierSlug,
  OrganizationRecord,
  PartnerRelationshipRecord,
  Role,
  StoredInvitationStatus,
  TokenRecord,
  UserRecord,
} from "../domain/model.js";

// Database rows to records; both drivers return timestamps as Dates, but a JSON round trip
// (or a text cast) may not, so strings are accepted too.

export const date = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));
export const dateOrNull = (v: unknown): Date | null => (v === null || v === undefined ? null : date(v));
export const textOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** A state change that may have been a no-op (repeated revocations keep the first time). */
export interface Changed<T> {
  record: T;
  changed: boolean;
}

export function toOrganization(r: Row): OrganizationRecord {
  return {
    id: String(r.id),
    name: String(r.name),
    primaryEmailDomain: String(r.primary_email_domain),
    emailDomains: r.email_domains as string[],
    administratorUserId: String(r.administrator_user_id),
    industry: String(r.industry),
    employeeCount: Number(r.employee_count),
    logoUrl: textOrNull(r.logo_url),
    crmOrgId: textOrNull(r.crm_org_id),
    partnerAdmin: Boolean(r.partner_admin),
    hasActiveIssues: Boolean(r.has_active_issues),
    licenseTier: r.license_tier as LicenseTierSlug,
    seatTotal: Number(r.seat_total),
    features: r.features as FeatureSet,
    licenseAsOf: date(r.license_as_of),
    version: Number(r.version),
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
  };
}

export function toUser(r: Row): UserRecord {
  return {
    id: String(r.id),
    orgId: String(r.org_id),
    email: String(r.email),
    firstName: textOrNull(r.first_name),
    lastName: textOrNull(r.last_name),
    displayName: String(r.display_name),
    title: textOrNull(r.title),
    department: textOrNull(r.department),
    phoneNumber: textOrNull(r.phone_number),
    profileImageUrl: textOrNull(r.profile_image_url),
    role: r.role as Role,
    active: Boolean(r.active),
    invitationStatus: r.invitation_status as StoredInvitationStatus,
    invitedAt: dateOrNull(r.invited_at),
    invitedByUserId: textOrNull(r.invited_by_user_id),
    invitedByName: textOrNull(r.invited_by_name),
    lastLoginAt: dateOrNull(r.last_login_at),
    twoFactorEnabled: Boolean(r.two_factor_enabled),
    crmUserId: textOrNull(r.crm_user_id),
    version: Number(r.version),
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
  };
}

export function toToken(r: Row): TokenRecord {
  return {
    id: String(r.id),
    orgId: String(r.org_id),
    name: String(r.name),
    keyHash: String(r.key_hash),
    keyPreview: String(r.key_preview),
    scopes: r.scopes as Scope[],
    expiresAt: dateOrNull(r.expires_at),
    revokedAt: dateOrNull(r.revoked_at),
    createdAt: date(r.created_at),
  };
}

export function toRelationship(r: Row): PartnerRelationshipRecord {
  return {
    parentOrgId: String(r.parent_org_id),
    childOrgId: String(r.child_org_id),
    grantedScopes: r.granted_scopes as Scope[],
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
    revokedAt: dateOrNull(r.revoked_at),
  };
}
