// The shapes identity's sandbox definitions are written in. They mirror identity's model
// types structurally (this library may not import a service); identity assigns the
// definitions into its own typed records when it seeds, so a definition its model no longer
// accepts fails identity's typecheck. Scheduling's shapes are shared through
// @platform/contracts/rest/schedule instead.

import type { Scope } from "@platform/kit/scopes";

export type LicenseTierSlug = "free" | "starter" | "professional" | "enterprise";
export type FeatureSet = Record<
  "smartScheduling" | "teamCalendarScheduling" | "replyTracking" | "emailBlast" | "dealIntelApp" | "meetingAi",
  boolean
>;
export type Role = "User" | "Admin" | "Partner Admin";

export interface SandboxUser {
  label: string;
  firstName: string;
  lastName: string;
  role: Role;
  title?: string;
  department?: string;
  /** E.164. */
  phoneNumber?: string;
  /** Set for a user still pending: days between the invitation and seeding. */
  invitedDaysAgo?: number;
  /** Last sign-in (ISO 8601); accepted users only. */
  lastLoginAt?: string;
  /** Deactivated (soft) when false. */
  active?: boolean;
  crmUserId?: string;
  twoFactorEnabled?: boolean;
}

export interface SandboxOrganization {
  label: string;
  name: string;
  emailDomains: readonly [string, ...string[]];
  industry: string;
  employeeCount: number;
  logoUrl?: string;
  crmOrgId?: string;
  partnerAdmin?: boolean;
  hasActiveIssues?: boolean;
  licenseTier: LicenseTierSlug;
  seatTotal: number;
  features: FeatureSet;
  /** Label of the contractual administrator, one of `users`. */
  administrator: string;
  /** Accepted users joined one day apart, in this order, from the epoch on. */
  users: readonly SandboxUser[];
}

export interface SandboxRelationship {
  parent: string;
  child: string;
  grantedScopes: readonly Scope[];
  revokedAt?: string;
}

export interface SandboxToken {
  name: string;
  org: string;
  scopes: readonly Scope[];
  expiresAt?: string;
  revokedAt?: string;
}

export interface SandboxDefinition {
  /** Creation time of the organizations, accepted users, relationships and tokens. */
  epoch: string;
  organizations: readonly SandboxOrganization[];
  relationships: readonly SandboxRelationship[];
  tokens: readonly SandboxToken[];
}
