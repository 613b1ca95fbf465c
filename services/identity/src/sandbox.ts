import { apiKeyPreview, hashApiKey, seededApiKey } from "@platform/kit/api-keys";
import type { Clock } from "@platform/kit/clock";
import type { Db } from "@platform/kit/db";
import { seededId } from "@platform/kit/ids";
import { ALL_SCOPES, PARTNER_SCOPE, READ_SCOPES, type Scope } from "@platform/kit/scopes";
import type { FeatureSet, LicenseTierSlug, Role } from "./domain/model.js";
import { validateGrantedScopes, validateTokenScopes } from "./domain/scopes.js";
import { pgIdentityStore } from "./store/identity.store.js";

/*
 * The sandbox: demo organizations, users, partner relationships and documented test keys.
 * Everything that identifies something (ids, keys) is derived from the seed, so the same
 * seed gives the same keys on every machine and after a re-seed; the CLI computes them
 * offline from this same definition. Timestamps are fixed, except invitations, which are
 * relative to the clock so that one stays pending and one stays expired.
 */

export interface SandboxUser {
  label: string;
  firstName: string;
  lastName: string;
  role: Role;
  title?: string;
  department?: string;
  /** Set for a user still pending: days between the invitation and seeding. */
  invitedDaysAgo?: number;
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
  licenseTier: LicenseTierSlug;
  seatTotal: number;
  features: FeatureSet;
  /** Label of the contractual administrator, one of `users`. */
  administrator: string;
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
          crmUserId: "0058d00000AcmeA01",
          twoFactorEnabled: true,
        },
        { label: "acme-admin", firstName: "Blake", lastName: "Rivera", role: "Admin", title: "Sales Ops Manager" },
        {
          label: "acme-ae",
          firstName: "Casey",
          lastName: "Morgan",
          role: "User",
          title: "Account Executive",
          department: "Sales",
          crmUserId: "0058d00000AcmeA03",
        },
        { label: "acme-sdr", firstName: "Devon", lastName: "Lee", role: "User", title: "SDR", department: "Sales" },
        { label: "acme-csm", firstName: "Emery", lastName: "Walsh", role: "User", department: "Customer Success" },
        { label: "acme-se", firstName: "Finley", lastName: "Ortiz", role: "User", department: "Sales Engineering" },
        { label: "acme-pending", firstName: "Gray", lastName: "Patel", role: "User", invitedDaysAgo: 2 },
        { label: "acme-expired", firstName: "Harper", lastName: "Quinn", role: "User", invitedDaysAgo: 20 },
        { label: "acme-deactivated", firstName: "Indigo", lastName: "Brooks", role: "User", active: false },
      ],
    },
    {
      label: "northwind",
      name: "Northwind Partners",
      emailDomains: ["northwind.example"],
      industry: "IT Services",
      employeeCount: 85,
      partnerAdmin: true,
      licenseTier: "enterprise",
      seatTotal: 25,
      features: ALL_FEATURES,
      administrator: "northwind-owner",
      users: [
        { label: "northwind-owner", firstName: "Nora", lastName: "Lindqvist", role: "Partner Admin" },
        { label: "northwind-consultant", firstName: "Oscar", lastName: "Reyes", role: "User", title: "Consultant" },
      ],
    },
    {
      label: "globex",
      name: "Globex",
      emailDomains: ["globex.example"],
      industry: "Logistics",
      employeeCount: 340,
      licenseTier: "starter",
      seatTotal: 5,
      features: { ...ALL_FEATURES, replyTracking: false, emailBlast: false, dealIntelApp: false, meetingAi: false },
      administrator: "globex-owner",
      users: [
        { label: "globex-owner", firstName: "Gina", lastName: "Romano", role: "Admin" },
        { label: "globex-rep", firstName: "Hugo", lastName: "Laurent", role: "User" },
      ],
    },
    {
      label: "initech",
      name: "Initech",
      emailDomains: ["initech.example"],
      industry: "Software",
      employeeCount: 560,
      licenseTier: "professional",
      seatTotal: 15,
      features: { ...ALL_FEATURES, meetingAi: false },
      administrator: "initech-owner",
      users: [
        { label: "initech-owner", firstName: "Ivan", lastName: "Petrov", role: "Admin" },
        { label: "initech-rep", firstName: "Jade", lastName: "Kim", role: "User" },
      ],
    },
    {
      label: "hooli",
      name: "Hooli",
      emailDomains: ["hooli.example"],
      industry: "Internet",
      employeeCount: 9000,
      licenseTier: "enterprise",
      seatTotal: 50,
      features: ALL_FEATURES,
      administrator: "hooli-owner",
      users: [{ label: "hooli-owner", firstName: "Kai", lastName: "Nakamura", role: "Admin" }],
    },
    {
      label: "umbrella",
      name: "Umbrella",
      emailDomains: ["umbrella.example"],
      industry: "Pharmaceuticals",
      employeeCount: 4200,
      licenseTier: "enterprise",
      seatTotal: 30,
      features: ALL_FEATURES,
      administrator: "umbrella-owner",
      users: [
        { label: "umbrella-owner", firstName: "Lena", lastName: "Fischer", role: "Admin" },
        { label: "umbrella-admin", firstName: "Nia", lastName: "Okafor", role: "Admin" },
        { label: "umbrella-rep", firstName: "Milo", lastName: "Novak", role: "User" },
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

export const sandboxOrgId = (seed: string, label: string): string => seededId("org_", seed, `org:${label}`);
export const sandboxUserId = (seed: string, label: string): string => seededId("usr_", seed, `user:${label}`);
export const sandboxTokenId = (seed: string, name: string): string => seededId("tok_", seed, `token:${name}`);

const DAY_MS = 24 * 60 * 60 * 1000;

/** A sandbox token's scopes under the admin plane's rules (so a bad definition fails loudly). */
function tokenScopes(t: SandboxToken, orgId: string): Scope[] {
  const org = SANDBOX.organizations.find((o) => o.label === t.org);
  return validateTokenScopes(t.scopes, { id: orgId, partnerAdmin: org?.partnerAdmin ?? false });
}

/**
 * Writes the sandbox in one transaction. Idempotent: when its first organization exists it
 * does nothing; a concurrent seeder waits on that row's key and then finds it.
 * Returns whether it wrote anything.
 */
export async function seedSandbox(db: Db, clock: Clock, seed: string): Promise<boolean> {
  const now = clock.now();
  const epoch = new Date(SANDBOX.epoch);
  return pgIdentityStore(db).tx(async (w) => {
    for (const [index, o] of SANDBOX.organizations.entries()) {
      const orgId = sandboxOrgId(seed, o.label);
      const inserted = await w.insertOrganization({
        id: orgId,
        name: o.name,
        primaryEmailDomain: o.emailDomains[0],
        emailDomains: [...o.emailDomains],
        administratorUserId: sandboxUserId(seed, o.administrator),
        industry: o.industry,
        employeeCount: o.employeeCount,
        logoUrl: o.logoUrl ?? null,
        crmOrgId: o.crmOrgId ?? null,
        partnerAdmin: o.partnerAdmin ?? false,
        licenseTier: o.licenseTier,
        seatTotal: o.seatTotal,
        features: o.features,
        licenseAsOf: epoch,
        version: 1,
        createdAt: epoch,
        updatedAt: epoch,
      });
      if (!inserted) {
        if (index === 0) return false;
        throw new Error(`sandbox organization ${o.label} exists without the first one; the sandbox is inconsistent`);
      }
      const administratorId = sandboxUserId(seed, o.administrator);
      for (const u of o.users) {
        const invitedAt = u.invitedDaysAgo === undefined ? epoch : new Date(now.getTime() - u.invitedDaysAgo * DAY_MS);
        const id = sandboxUserId(seed, u.label);
        await w.insertUser({
          id,
          orgId,
          email: `${u.firstName}.${u.lastName}@${o.emailDomains[0]}`.toLowerCase(),
          firstName: u.firstName,
          lastName: u.lastName,
          displayName: `${u.firstName} ${u.lastName}`,
          title: u.title ?? null,
          department: u.department ?? null,
          phoneNumber: null,
          profileImageUrl: null,
          role: u.role,
          active: u.active ?? true,
          invitationStatus: u.invitedDaysAgo === undefined ? "accepted" : "pending",
          invitedAt,
          invitedByUserId: id === administratorId ? null : administratorId,
          lastLoginAt: u.invitedDaysAgo === undefined ? epoch : null,
          twoFactorEnabled: u.twoFactorEnabled ?? false,
          crmUserId: u.crmUserId ?? null,
          version: 1,
          createdAt: invitedAt,
          updatedAt: invitedAt,
        });
      }
    }
    for (const r of SANDBOX.relationships) {
      const parent = sandboxOrgId(seed, r.parent);
      const child = sandboxOrgId(seed, r.child);
      await w.upsertRelationship(parent, child, validateGrantedScopes(r.grantedScopes), epoch);
      if (r.revokedAt) await w.revokeRelationship(parent, child, new Date(r.revokedAt));
    }
    for (const t of SANDBOX.tokens) {
      const key = seededApiKey(seed, t.name);
      const orgId = sandboxOrgId(seed, t.org);
      await w.insertToken({
        id: sandboxTokenId(seed, t.name),
        orgId,
        name: t.name,
        keyHash: hashApiKey(key),
        keyPreview: apiKeyPreview(key),
        scopes: tokenScopes(t, orgId),
        expiresAt: t.expiresAt ? new Date(t.expiresAt) : null,
        revokedAt: t.revokedAt ? new Date(t.revokedAt) : null,
        createdAt: epoch,
      });
    }
    return true;
  });
}

/** A named sandbox key with its token, as `platform sandbox keys` shows it. */
export interface SandboxKeyInfo {
  name: string;
  key: string;
  tokenId: string;
  orgId: string;
  orgName: string;
  scopes: string[];
  expiresAt: Date | null;
  revokedAt: Date | null;
}

/** The keys as the definition seeds them, without a database (later revocations not reflected). */
export function sandboxKeysOffline(seed: string): SandboxKeyInfo[] {
  const orgNames = new Map(SANDBOX.organizations.map((o) => [o.label, o.name]));
  return SANDBOX.tokens.map((t) => ({
    name: t.name,
    key: seededApiKey(seed, t.name),
    tokenId: sandboxTokenId(seed, t.name),
    orgId: sandboxOrgId(seed, t.org),
    orgName: orgNames.get(t.org) ?? t.org,
    scopes: tokenScopes(t, sandboxOrgId(seed, t.org)),
    expiresAt: t.expiresAt ? new Date(t.expiresAt) : null,
    revokedAt: t.revokedAt ? new Date(t.revokedAt) : null,
  }));
}

/**
 * The sandbox keys with their current state from the database (so a later revocation
 * shows). Keys whose token is not in the database (sandbox not seeded) are left out.
 */
export async function sandboxKeys(db: Db, seed: string): Promise<SandboxKeyInfo[]> {
  const offline = sandboxKeysOffline(seed);
  const store = pgIdentityStore(db);
  const tokens = new Map((await store.findTokens(offline.map((k) => k.tokenId))).map((t) => [t.id, t]));
  const orgs = new Map((await store.listOrganizations()).map((o) => [o.id, o.name]));
  return offline.flatMap((k) => {
    const token = tokens.get(k.tokenId);
    if (!token) return [];
    return [
      {
        ...k,
        orgName: orgs.get(token.orgId) ?? k.orgName,
        scopes: token.scopes,
        expiresAt: token.expiresAt,
        revokedAt: token.revokedAt,
      },
    ];
  });
}
