import { apiKeyPreview, hashApiKey, seededApiKey } from "@platform/kit/api-keys";
import type { Clock } from "@platform/kit/clock";
import type { Db } from "@platform/kit/db";
import type { Scope } from "@platform/kit/scopes";
import {
  SANDBOX,
  type SandboxKeyInfo,
  type SandboxToken,
  sandboxKeysOffline,
  sandboxOrgId,
  sandboxTokenId,
  sandboxUserEmail,
  sandboxUserId,
} from "@platform/sandbox";
import { validateGrantedScopes, validateTokenScopes } from "./domain/scopes.js";
import { pgStore } from "./store/index.js";

/*
 * The sandbox: demo organizations, users, partner relationships and documented test keys,
 * as @platform/sandbox defines them. Everything that identifies something (ids, keys) is
 * derived from the seed, so the same seed gives the same keys on every machine and after a
 * re-seed; the CLI computes them offline from the same definition. Timestamps are fixed,
 * except invitations, which are relative to the clock so that one stays pending and one
 * stays expired.
 */

const DAY_MS = 24 * 60 * 60 * 1000;
const at = (epoch: Date, days: number) => new Date(epoch.getTime() + days * DAY_MS);

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
  return pgStore(db).tx(async (w) => {
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
        hasActiveIssues: o.hasActiveIssues ?? false,
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
      for (const [joined, u] of o.users.entries()) {
        const invitedAt =
          u.invitedDaysAgo === undefined ? at(epoch, joined) : new Date(now.getTime() - u.invitedDaysAgo * DAY_MS);
        const id = sandboxUserId(seed, u.label);
        await w.insertUser({
          id,
          orgId,
          email: sandboxUserEmail(u, o),
          firstName: u.firstName,
          lastName: u.lastName,
          displayName: `${u.firstName} ${u.lastName}`,
          title: u.title ?? null,
          department: u.department ?? null,
          phoneNumber: u.phoneNumber ?? null,
          profileImageUrl: null,
          role: u.role,
          active: u.active ?? true,
          invitationStatus: u.invitedDaysAgo === undefined ? "accepted" : "pending",
          invitedAt,
          invitedByUserId: id === administratorId ? null : administratorId,
          invitedByName: null,
          lastLoginAt: u.lastLoginAt ? new Date(u.lastLoginAt) : null,
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

/**
 * The sandbox keys with their current state from the database (so a later revocation
 * shows). Keys whose token is not in the database (sandbox not seeded) are left out.
 */
export async function sandboxKeys(db: Db, seed: string): Promise<SandboxKeyInfo[]> {
  const offline = sandboxKeysOffline(seed);
  const store = pgStore(db);
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
