import type { SandboxKeyInfo } from "@platform/contracts/sandbox-key";
import { seededApiKey } from "@platform/kit/api-keys";
import { SANDBOX } from "./identity-data.js";
import { sandboxOrgId, sandboxTokenId } from "./ids.js";
import type { SandboxOrganization, SandboxUser } from "./types.js";

// The sandbox's organizations, users, partner relationships and keys (identity seeds them;
// see services/identity/src/sandbox.ts). The other contexts' sandboxes are built around
// these users, and the CLI shows the keys offline, so the definition lives here rather than
// in identity. The README and the tests rely on its facts: Acme's 10 seats with 7 used, its
// two Admins, its pending, expired and deactivated users; Northwind's children; the named keys.

export { SANDBOX };

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
