import type { SandboxKeyInfo } from "@platform/contracts/sandbox-key";
import { seededApiKey } from "@platform/kit/api-keys";
import { ALL_SCOPES, PARTNER_SCOPE, READ_SCOPES, type Scope } from "@platform/kit/scopes";
import { sandboxOrgId, sandboxTokenId } from "./ids.js";
import type { FeatureSet, LicenseTierSlug, Role } from "./types.js";

// The sandbox's organizations, users, partner relationships and keys (identity seeds them;
// see services/identity/src/sandbox.ts). The other contexts' sandboxes are built around
// these users, and the CLI shows the keys offline, so the definition lives here rather than
// in identity. The README and the tests rely on its facts: Acme's 10 seats with 7 used, its
// two Admins, its pending, expired and deactivated users; Northwind's children; the named keys.

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

const ALL_FEATURES: FeatureSet = {
  smartScheduling: true,
  teamCalendarScheduling: true,
  replyTracking: true,
  emailBlast: true,
  dealIntelApp: true,
  meetingAi: true,
};

const NON_PARTNER_SCOPES: readonly Scope[] = ALL_SCOPES.filter((s) => s !== PARTNER_SCOPE);

export const SANDBOX: SandboxDefinition = {
  epoch: "2024-10-01T09:00:00.000Z",
  organizations: [
    {
      label: "acme",
      name: "Acme Corp",
      emailDomains: ["acme.example", "acme-corp.example"],
      industry: "Manufacturing",
      employeeCount: 1200,
      logoUrl: "https://acme.example/logo.png",
      crmOrgId: "00D8d000004AcmeEAA",
      licenseTier: "professional",
      seatTotal: 10,
      features: { ...ALL_FEATURES, meetingAi: false },
      administrator: "acme-owner",
      // Seats used: 2 admins + 4 users + 1 pending invitation = 7 of 10.
      users: [
        {
          label: "acme-owner",
          firstName: "Avery",
          lastName: "Stone",
          role: "Admin",
          title: "VP Revenue Operations",
          department: "Operations",
          phoneNumber: "+12025550101",
          lastLoginAt: "2026-01-12T08:41:00.000Z",
          crmUserId: "0058d00000AcmeA01",
          twoFactorEnabled: true,
        },
        {
          label: "acme-admin",
          firstName: "Blake",
          lastName: "Rivera",
          role: "Admin",
          title: "Sales Ops Manager",
          department: "Operations",
          phoneNumber: "+12025550102",
          lastLoginAt: "2026-01-14T16:05:00.000Z",
          crmUserId: "0058d00000AcmeA02",
          twoFactorEnabled: true,
        },
        {
          label: "acme-ae",
          firstName: "Casey",
          lastName: "Morgan",
          role: "User",
          title: "Account Executive",
          department: "Sales",
          phoneNumber: "+12025550103",
          lastLoginAt: "2026-01-13T14:22:00.000Z",
          crmUserId: "0058d00000AcmeA03",
        },
        {
          label: "acme-sdr",
          firstName: "Devon",
          lastName: "Lee",
          role: "User",
          title: "Sales Development Representative",
          department: "Sales",
          phoneNumber: "+12025550104",
          lastLoginAt: "2026-01-09T10:15:00.000Z",
          crmUserId: "0058d00000AcmeA04",
        },
        {
          label: "acme-csm",
          firstName: "Emery",
          lastName: "Walsh",
          role: "User",
          title: "Customer Success Manager",
          department: "Customer Success",
          lastLoginAt: "2025-12-18T09:30:00.000Z",
          crmUserId: "0058d00000AcmeA05",
          twoFactorEnabled: true,
        },
        {
          label: "acme-se",
          firstName: "Finley",
          lastName: "Ortiz",
          role: "User",
          title: "Solutions Engineer",
          department: "Sales Engineering",
          phoneNumber: "+12025550106",
          lastLoginAt: "2026-01-06T17:48:00.000Z",
          crmUserId: "0058d00000AcmeA06",
        },
        {
          label: "acme-pending",
          firstName: "Gray",
          lastName: "Patel",
          role: "User",
          title: "Account Executive",
          department: "Sales",
          invitedDaysAgo: 2,
        },
        {
          label: "acme-expired",
          firstName: "Harper",
          lastName: "Quinn",
          role: "User",
          title: "Marketing Manager",
          department: "Marketing",
          invitedDaysAgo: 20,
        },
        {
          label: "acme-deactivated",
          firstName: "Indigo",
          lastName: "Brooks",
          role: "User",
          title: "Account Executive",
          department: "Sales",
          phoneNumber: "+12025550109",
          lastLoginAt: "2025-07-31T15:02:00.000Z",
          crmUserId: "0058d00000AcmeA09",
          active: false,
        },
      ],
    },
    {
      label: "northwind",
      name: "Northwind Partners",
      emailDomains: ["northwind.example"],
      industry: "IT Services",
      employeeCount: 85,
      logoUrl: "https://northwind.example/assets/logo.svg",
      partnerAdmin: true,
      licenseTier: "enterprise",
      seatTotal: 25,
      features: ALL_FEATURES,
      administrator: "northwind-owner",
      users: [
        {
          label: "northwind-owner",
          firstName: "Nora",
          lastName: "Lindqvist",
          role: "Partner Admin",
          title: "Managing Partner",
          department: "Leadership",
          phoneNumber: "+46701740605",
          lastLoginAt: "2026-01-14T07:55:00.000Z",
          twoFactorEnabled: true,
        },
        {
          label: "northwind-consultant",
          firstName: "Oscar",
          lastName: "Reyes",
          role: "User",
          title: "Consultant",
          department: "Delivery",
          phoneNumber: "+46701740612",
          lastLoginAt: "2026-01-13T12:40:00.000Z",
          twoFactorEnabled: true,
        },
        {
          label: "northwind-lead",
          firstName: "Theo",
          lastName: "Martins",
          role: "Partner Admin",
          title: "Delivery Lead",
          department: "Delivery",
          phoneNumber: "+46701740618",
          lastLoginAt: "2026-01-08T13:10:00.000Z",
          twoFactorEnabled: true,
        },
      ],
    },
    {
      label: "globex",
      name: "Globex",
      emailDomains: ["globex.example"],
      industry: "Logistics",
      employeeCount: 340,
      logoUrl: "https://globex.example/logo.png",
      licenseTier: "starter",
      seatTotal: 5,
      features: { ...ALL_FEATURES, replyTracking: false, emailBlast: false, dealIntelApp: false, meetingAi: false },
      administrator: "globex-owner",
      users: [
        {
          label: "globex-owner",
          firstName: "Gina",
          lastName: "Romano",
          role: "Admin",
          title: "Head of Sales",
          department: "Sales",
          phoneNumber: "+13125550141",
          lastLoginAt: "2026-01-12T15:20:00.000Z",
          twoFactorEnabled: true,
        },
        {
          label: "globex-rep",
          firstName: "Hugo",
          lastName: "Laurent",
          role: "User",
          title: "Freight Sales Representative",
          department: "Sales",
          phoneNumber: "+13125550142",
          lastLoginAt: "2026-01-10T11:05:00.000Z",
        },
        {
          label: "globex-coordinator",
          firstName: "Priya",
          lastName: "Shah",
          role: "User",
          title: "Sales Coordinator",
          department: "Sales",
          lastLoginAt: "2025-12-22T09:45:00.000Z",
        },
      ],
    },
    {
      label: "initech",
      name: "Initech",
      emailDomains: ["initech.example"],
      industry: "Software",
      employeeCount: 560,
      // A failed payment: what a partner's hasActiveIssues filter finds.
      hasActiveIssues: true,
      licenseTier: "professional",
      seatTotal: 15,
      features: { ...ALL_FEATURES, meetingAi: false },
      administrator: "initech-owner",
      users: [
        {
          label: "initech-owner",
          firstName: "Ivan",
          lastName: "Petrov",
          role: "Admin",
          title: "Director of Sales",
          department: "Sales",
          phoneNumber: "+15125550171",
          lastLoginAt: "2026-01-11T16:30:00.000Z",
        },
        {
          label: "initech-rep",
          firstName: "Jade",
          lastName: "Kim",
          role: "User",
          title: "Account Executive",
          department: "Sales",
          phoneNumber: "+15125550172",
          lastLoginAt: "2026-01-14T10:12:00.000Z",
        },
        {
          label: "initech-engineer",
          firstName: "Peter",
          lastName: "Gibbons",
          role: "User",
          title: "Sales Engineer",
          department: "Engineering",
          lastLoginAt: "2025-11-28T14:00:00.000Z",
        },
        {
          label: "initech-pending",
          firstName: "Joanna",
          lastName: "Park",
          role: "User",
          title: "Business Development Representative",
          department: "Sales",
          invitedDaysAgo: 5,
        },
        {
          label: "initech-deactivated",
          firstName: "Milton",
          lastName: "Waddams",
          role: "User",
          title: "Collations Specialist",
          department: "Operations",
          lastLoginAt: "2025-05-02T08:00:00.000Z",
          active: false,
        },
      ],
    },
    {
      label: "hooli",
      name: "Hooli",
      emailDomains: ["hooli.example", "hooli-xyz.example"],
      industry: "Internet",
      employeeCount: 9000,
      logoUrl: "https://hooli.example/brand/logo.png",
      crmOrgId: "00D5e000001HooliEAA",
      licenseTier: "enterprise",
      seatTotal: 50,
      features: ALL_FEATURES,
      administrator: "hooli-owner",
      users: [
        {
          label: "hooli-owner",
          firstName: "Kai",
          lastName: "Nakamura",
          role: "Admin",
          title: "VP Global Sales",
          department: "Sales",
          phoneNumber: "+16505550121",
          lastLoginAt: "2026-01-14T18:25:00.000Z",
          crmUserId: "0055e00000HooliK1",
          twoFactorEnabled: true,
        },
        {
          label: "hooli-ops",
          firstName: "Dana",
          lastName: "Whitfield",
          role: "Admin",
          title: "Revenue Operations Lead",
          department: "Operations",
          phoneNumber: "+16505550122",
          lastLoginAt: "2026-01-13T09:02:00.000Z",
          crmUserId: "0055e00000HooliD2",
          twoFactorEnabled: true,
        },
        {
          label: "hooli-ae",
          firstName: "Raj",
          lastName: "Patel",
          role: "User",
          title: "Enterprise Account Executive",
          department: "Sales",
          phoneNumber: "+16505550123",
          lastLoginAt: "2026-01-12T20:14:00.000Z",
          crmUserId: "0055e00000HooliR3",
          twoFactorEnabled: true,
        },
        {
          label: "hooli-sdr",
          firstName: "Sofia",
          lastName: "Alvarez",
          role: "User",
          title: "Sales Development Representative",
          department: "Sales",
          lastLoginAt: "2026-01-07T15:37:00.000Z",
          crmUserId: "0055e00000HooliS4",
          twoFactorEnabled: true,
        },
      ],
    },
    {
      label: "umbrella",
      name: "Umbrella",
      emailDomains: ["umbrella.example"],
      industry: "Pharmaceuticals",
      employeeCount: 4200,
      logoUrl: "https://umbrella.example/logo.png",
      crmOrgId: "00D3z000002UmbrEAA",
      licenseTier: "enterprise",
      seatTotal: 30,
      features: ALL_FEATURES,
      administrator: "umbrella-owner",
      users: [
        {
          label: "umbrella-owner",
          firstName: "Lena",
          lastName: "Fischer",
          role: "Admin",
          title: "Chief Commercial Officer",
          department: "Commercial",
          phoneNumber: "+442079460101",
          lastLoginAt: "2026-01-12T07:30:00.000Z",
          crmUserId: "0053z00000UmbrL1",
          twoFactorEnabled: true,
        },
        {
          label: "umbrella-admin",
          firstName: "Nia",
          lastName: "Okafor",
          role: "Admin",
          title: "Sales Systems Administrator",
          department: "IT",
          phoneNumber: "+442079460102",
          lastLoginAt: "2026-01-14T11:48:00.000Z",
          crmUserId: "0053z00000UmbrN2",
          twoFactorEnabled: true,
        },
        {
          label: "umbrella-rep",
          firstName: "Milo",
          lastName: "Novak",
          role: "User",
          title: "Key Account Manager",
          department: "Commercial",
          phoneNumber: "+442079460103",
          lastLoginAt: "2026-01-09T13:55:00.000Z",
          crmUserId: "0053z00000UmbrM3",
        },
        {
          label: "umbrella-msl",
          firstName: "Jill",
          lastName: "Chen",
          role: "User",
          title: "Medical Science Liaison",
          department: "Medical Affairs",
          invitedDaysAgo: 9,
        },
      ],
    },
  ],
  relationships: [
    {
      parent: "northwind",
      child: "globex",
      grantedScopes: ["organizations:read", "users:read", "deals:read", "accounts:read", "contacts:read"],
    },
    { parent: "northwind", child: "initech", grantedScopes: NON_PARTNER_SCOPES },
    {
      parent: "northwind",
      child: "hooli",
      grantedScopes: ["organizations:read"],
      revokedAt: "2025-03-01T09:00:00.000Z",
    },
  ],
  tokens: [
    { name: "acme-full", org: "acme", scopes: NON_PARTNER_SCOPES },
    { name: "acme-readonly", org: "acme", scopes: READ_SCOPES },
    { name: "acme-noscopes", org: "acme", scopes: [] },
    { name: "acme-expired", org: "acme", scopes: NON_PARTNER_SCOPES, expiresAt: "2025-01-01T00:00:00.000Z" },
    { name: "acme-revoked", org: "acme", scopes: NON_PARTNER_SCOPES, revokedAt: "2025-02-01T09:00:00.000Z" },
    { name: "northwind-partner", org: "northwind", scopes: ALL_SCOPES },
    { name: "northwind-nodelegation", org: "northwind", scopes: NON_PARTNER_SCOPES },
    { name: "umbrella-full", org: "umbrella", scopes: NON_PARTNER_SCOPES },
  ],
};

/** A sandbox user's email address, as identity seeds it (the org's first domain). */
export function sandboxUserEmail(user: Pick<SandboxUser, "firstName" | "lastName">, org: SandboxOrganization): string {
  return `${user.firstName}.${user.lastName}@${org.emailDomains[0]}`.toLowerCase();
}

/** A sandbox user and its organization by label; throws for an unknown label (a bad definition). */
export function sandboxUser(label: string): { user: SandboxUser; org: SandboxOrganization } {
  for (const org of SANDBOX.organizations) {
    const user = org.users.find((u) => u.label === label);
    if (user) return { user, org };
  }
  throw new Error(`no sandbox user ${label}`);
}

/** A sandbox user's display name ("First Last"). */
export const sandboxUserName = (label: string): string => {
  const { user } = sandboxUser(label);
  return `${user.firstName} ${user.lastName}`;
};

// The key's shape is the admin plane's (identity answers with it, the CLI reads it back).
export type { SandboxKeyInfo } from "@platform/contracts/sandbox-key";

/**
 * The keys as the definition seeds them, without a database (later revocations not
 * reflected). Identity validates the scopes when it seeds them; its tests check both agree.
 */
export function sandboxKeysOffline(seed: string): SandboxKeyInfo[] {
  const orgNames = new Map(SANDBOX.organizations.map((o) => [o.label, o.name]));
  return SANDBOX.tokens.map((t) => ({
    name: t.name,
    key: seededApiKey(seed, t.name),
    tokenId: sandboxTokenId(seed, t.name),
    orgId: sandboxOrgId(seed, t.org),
    orgName: orgNames.get(t.org) ?? t.org,
    scopes: [...t.scopes],
    expiresAt: t.expiresAt ? new Date(t.expiresAt) : null,
    revokedAt: t.revokedAt ? new Date(t.revokedAt) : null,
  }));
}
