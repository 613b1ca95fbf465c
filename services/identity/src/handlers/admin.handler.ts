import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { IdentityAdminService } from "@platform/contracts/identity";
import { sandboxKeyMessage } from "@platform/contracts/sandbox-key";
import { apiKeyPreview, generateApiKey, hashApiKey } from "@platform/kit/api-keys";
import type { Clock } from "@platform/kit/clock";
import type { Db } from "@platform/kit/db";
import { newId } from "@platform/kit/ids";
import type { Logger } from "@platform/kit/logger";
import { problem } from "@platform/kit/problems";
import { auditLimit } from "../domain/listing.js";
import type { TokenRecord } from "../domain/model.js";
import { checkPartnerPair, checkSingleParent } from "../domain/partners.js";
import { validateGrantedScopes, validateTokenScopes } from "../domain/scopes.js";
import { tokenName } from "../domain/tokens.js";
import { partnerGrantChangedEvent, tokenCreatedEvent, tokenRevokedEvent } from "../events/outbox-events.js";
import { delegationAuditMessage, organizationSummaryMessage, relationshipMessage, tokenMessage } from "../messages.js";
import { sandboxKeys } from "../sandbox.js";
import type { OrganizationStore, Store } from "../store/index.js";

export interface AdminDeps {
  db: Db;
  store: Store;
  clock: Clock;
  logger: Logger;
  sandboxSeed: string;
  /** Runs a write transaction and then tells the outbox relay there is something to publish. */
  write: Store["tx"];
}

async function loadOrg(store: OrganizationStore, id: string) {
  const org = await store.findOrganization(id);
  if (!org) throw problem("organization-not-found", `Organization '${id}' was not found.`);
  return org;
}

/** The admin plane: token and partner management and the delegation audit, behind the admin secret. */
export function adminHandlers(deps: AdminDeps): ServiceImpl<typeof IdentityAdminService> {
  const { store, clock, logger, write } = deps;
  return {
    async createToken(req) {
      const name = tokenName(req.name);
      const { token, key } = await write(async (w) => {
        const org = await loadOrg(w, req.orgId);
        const now = clock.now();
        const key = generateApiKey();
        const token: TokenRecord = {
          id: newId("tok_"),
          orgId: org.id,
          name,
          keyHash: hashApiKey(key),
          keyPreview: apiKeyPreview(key),
          scopes: validateTokenScopes(req.scopes, org),
          // An expiry in the past is allowed: it makes a key for testing subscription-expired.
          expiresAt: req.expireTime ? timestampDate(req.expireTime) : null,
          revokedAt: null,
          createdAt: now,
        };
        await w.insertToken(token);
        await w.enqueue(tokenCreatedEvent(token, now));
        return { token, key };
      });
      logger.info({ tokenId: token.id, orgId: token.orgId, scopes: token.scopes }, "token created");
      return { token: tokenMessage(token), key };
    },

    async listTokens(req) {
      const tokens = await store.listTokens(req.orgId || undefined);
      return { tokens: tokens.map(tokenMessage) };
    },

    async revokeToken(req) {
      const result = await write(async (w) => {
        const now = clock.now();
        const revoked = await w.revokeToken(req.tokenId, now);
        if (!revoked) throw problem("not-found", `Token '${req.tokenId}' was not found.`);
        if (revoked.changed) await w.enqueue(tokenRevokedEvent(revoked.record, now));
        return revoked;
      });
      if (result.changed) logger.info({ tokenId: result.record.id, orgId: result.record.orgId }, "token revoked");
      return { token: tokenMessage(result.record) };
    },

    async listOrganizations() {
      const orgs = await store.listOrganizations();
      return { organizations: orgs.map(organizationSummaryMessage) };
    },

    async setPartnerGrant(req) {
      const grantedScopes = validateGrantedScopes(req.grantedScopes);
      const relationship = await write(async (w) => {
        const parent = await loadOrg(w, req.parentOrgId);
        const child = await loadOrg(w, req.childOrgId);
        checkPartnerPair(parent, child);
        checkSingleParent(child.id, parent.id, await w.findActiveParentOrgId(child.id));
        const r = await w.upsertRelationship(parent.id, child.id, grantedScopes, clock.now());
        await w.enqueue(partnerGrantChangedEvent(r));
        return r;
      });
      logger.info(
        { parentOrgId: relationship.parentOrgId, childOrgId: relationship.childOrgId, grantedScopes },
        "partner grant set",
      );
      return { relationship: relationshipMessage(relationship) };
    },

    async revokePartnerGrant(req) {
      const result = await write(async (w) => {
        const revoked = await w.revokeRelationship(req.parentOrgId, req.childOrgId, clock.now());
        if (!revoked) {
          throw problem("not-found", `No partner relationship between '${req.parentOrgId}' and '${req.childOrgId}'.`);
        }
        if (revoked.changed) await w.enqueue(partnerGrantChangedEvent(revoked.record));
        return revoked;
      });
      if (result.changed) {
        logger.info({ parentOrgId: req.parentOrgId, childOrgId: req.childOrgId }, "partner grant revoked");
      }
      return { relationship: relationshipMessage(result.record) };
    },

    async listSandboxKeys() {
      const keys = await sandboxKeys(deps.db, deps.sandboxSeed);
      return { keys: keys.map(sandboxKeyMessage) };
    },

    async listDelegationAudit(req) {
      const entries = await store.listDelegationAudit({
        ...(req.parentOrgId ? { parentOrgId: req.parentOrgId } : {}),
        ...(req.orgId ? { orgId: req.orgId } : {}),
        limit: auditLimit(req.limit),
      });
      return { entries: entries.map(delegationAuditMessage) };
    },
  };
}
