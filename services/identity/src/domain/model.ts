import { FEATURE_KEYS, LICENSE_TIERS, ROLES } from "@platform/contracts/identity";
import type { Scope } from "@platform/kit/scopes";

// The API's enumerations are the contracts' lists, which the gateway documents.
export { FEATURE_KEYS, LICENSE_TIERS, ROLES };
export type LicenseTierSlug = (typeof LICENSE_TIERS)[number];

export type FeatureKey = (typeof FEATURE_KEYS)[number];
export type FeatureSet = Record<FeatureKey, boolean>;

export type Role = (typeof ROLES)[number];

/** What is stored; "expired" is derived from the clock (see `invitationStatus`). */
export type StoredInvitationStatus = "accepted" | "pending";
export type InvitationStatus = StoredInvitationStatus | "expired";

export interface OrganizationRecord {
  id: string;
  name: string;
  primaryEmailDomain: string;
  emailDomains: string[];
  administratorUserId: string;
  industry: string;
  employeeCount: number;
  logoUrl: string | null;
  crmOrgId: string | null;
  partnerAdmin: boolean;
  /** Expired trial, failed payment, security incident or similar (shown to partners). */
  hasActiveIssues: boolean;
  licenseTier: LicenseTierSlug;
  seatTotal: number;
  features: FeatureSet;
  licenseAsOf: Date;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface UserRecord {
  id: string;
  orgId: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  displayName: string;
  title: string | null;
  department: string | null;
  phoneNumber: string | null;
  profileImageUrl: string | null;
  role: Role;
  active: boolean;
  invitationStatus: StoredInvitationStatus;
  invitedAt: Date | null;
  invitedByUserId: string | null;
  /** Who invited when no user did (an invitation through the API): "<Org name> (API)". */
  invitedByName: string | null;
  lastLoginAt: Date | null;
  twoFactorEnabled: boolean;
  crmUserId: string | null;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface TokenRecord {
  id: string;
  orgId: string;
  name: string;
  keyHash: string;
  keyPreview: string;
  scopes: Scope[];
  expiresAt: Date | null;
  revokedAt: Date | null;
  createdAt: Date;
}

export interface PartnerRelationshipRecord {
  parentOrgId: string;
  childOrgId: string;
  grantedScopes: Scope[];
  createdAt: Date;
  updatedAt: Date;
  revokedAt: Date | null;
}
