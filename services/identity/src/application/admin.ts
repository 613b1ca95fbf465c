import { apiKeyPreview, generateApiKey, hashApiKey } from "@platform/kit/api-keys";
import type { Clock } from "@platform/kit/clock";
import { newId } from "@platform/kit/ids";
import { problem } from "@platform/kit/problems";
import type { TokenRecord } from "../domain/model.js";
import { checkPartnerPair, checkSingleParent } from "../domain/partners.js";
import { validateGrantedScopes, validateTokenScopes } from "../domain/scopes.js";
import { tokenName } from "../domain/tokens.js";
import { partnerGrantChangedEvent, tokenCreatedEvent, tokenRevokedEvent } from "../events/outbox-events.js";
import type { OrganizationStore, Store } from "../store/index.js";

// The admin plane's writes: issuing and revoking API tokens, setting and revoking partner
// grants, each with its outbox event. The admin handlers map the RPCs onto these and log what
// changed; `write` is the transaction that tells the outbox relay once it commits.

export interface AdminWriteDeps {
  clock: Clock;
  /** Runs a write transaction and then tells the outbox relay there is something to publish. */
  write: Store["tx"];
}

// The admin plane names ids as the operator typed them, quoted.
async function loadOrg(store: Pick<OrganizationStore, "findOrganization">, id: string) {
  const org = await store.findOrganization(id);
  if (!org) throw problem("organization-not-found", `Organization '${id}' was not found.`);
  return org;
}

/** A token to issue: its name and scopes as sent; an expiry in the past makes a key for testing subscription-expired. */
export interface NewToken {
  orgId: string;
  name: string;
  scopes: readonly string[];
  expiresAt: Date | null;
}

/** Issues an API token of an organization: the stored token, and its key, which only this answer carries. */
export async function createToken({ clock, write }: AdminWriteDeps, cmd: NewToken) {
  const name = tokenName(cmd.name);
  return write(async (w) => {
    const org = await loadOrg(w, cmd.orgId);
    const now = clock.now();
    const key = generateApiKey();
    const token: TokenRecord = {
      id: newId("tok_"),
      orgId: org.id,
      name,
      keyHash: hashApiKey(key),
      keyPreview: apiKeyPreview(key),
      scopes: validateTokenScopes(cmd.scopes, org),
      expiresAt: cmd.expiresAt,
      revokedAt: null,
      createdAt: now,
    };
    await w.insertToken(token);
    await w.enqueue(tokenCreatedEvent(token, now));
    return { token, key };
  });
}

/** Revokes a token (404 not-found when unknown); revoking one again changes nothing and enqueues nothing. */
export async function revokeToken({ clock, write }: AdminWriteDeps, tokenId: string) {
  return write(async (w) => {
    const now = clock.now();
    const revoked = await w.revokeToken(tokenId, now);
    if (!revoked) throw problem("not-found", `Token '${tokenId}' was not found.`);
    if (revoked.changed) await w.enqueue(tokenRevokedEvent(revoked.record, now));
    return revoked;
  });
}

/** A partner grant: the parent organization, its child, and the scopes it may act with. */
export interface PartnerGrant {
  parentOrgId: string;
  childOrgId: string;
  grantedScopes: readonly string[];
}

/** Sets (or changes) a partner's grant on a child: a partner-admin parent, a child with no other parent. */
export async function setPartnerGrant({ clock, write }: AdminWriteDeps, cmd: PartnerGrant) {
  const grantedScopes = validateGrantedScopes(cmd.grantedScopes);
  const relationship = await write(async (w) => {
    const parent = await loadOrg(w, cmd.parentOrgId);
    const child = await loadOrg(w, cmd.childOrgId);
    checkPartnerPair(parent, child);
    checkSingleParent(child.id, parent.id, await w.findActiveParentOrgId(child.id));
    const r = await w.upsertRelationship(parent.id, child.id, grantedScopes, clock.now());
    await w.enqueue(partnerGrantChangedEvent(r));
    return r;
  });
  return { relationship, grantedScopes };
}

/** Revokes a partner's grant on a child (404 not-found when there is none); revoking again changes nothing. */
export async function revokePartnerGrant(
  { clock, write }: AdminWriteDeps,
  cmd: Pick<PartnerGrant, "parentOrgId" | "childOrgId">,
) {
  return write(async (w) => {
    const revoked = await w.revokeRelationship(cmd.parentOrgId, cmd.childOrgId, clock.now());
    if (!revoked) {
      throw problem("not-found", `No partner relationship between '${cmd.parentOrgId}' and '${cmd.childOrgId}'.`);
    }
    if (revoked.changed) await w.enqueue(partnerGrantChangedEvent(revoked.record));
    return revoked;
  });
}
