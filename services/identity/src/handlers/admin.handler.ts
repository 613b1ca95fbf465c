import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { IdentityAdminService } from "@platform/contracts/identity";
import { sandboxKeyMessage } from "@platform/contracts/sandbox-key";
import type { Clock } from "@platform/kit/clock";
import type { Db } from "@platform/kit/db";
import type { Logger } from "@platform/kit/logger";
import { createToken, revokePartnerGrant, revokeToken, setPartnerGrant } from "../application/admin.js";
import { auditLimit } from "../domain/listing.js";
import { delegationAuditMessage, organizationSummaryMessage, relationshipMessage, tokenMessage } from "../messages.js";
import { sandboxKeys } from "../sandbox.js";
import type { Store } from "../store/index.js";

export interface AdminDeps {
  db: Db;
  store: Store;
  clock: Clock;
  logger: Logger;
  sandboxSeed: string;
  /** Runs a write transaction and then tells the outbox relay there is something to publish. */
  write: Store["tx"];
}

/** The admin plane: token and partner management and the delegation audit, behind the admin secret. */
export function adminHandlers(deps: AdminDeps): ServiceImpl<typeof IdentityAdminService> {
  const { store, logger } = deps;
  return {
    async createToken(req) {
      const { token, key } = await createToken(deps, {
        orgId: req.orgId,
        name: req.name,
        scopes: req.scopes,
        expiresAt: req.expireTime ? timestampDate(req.expireTime) : null,
      });
      logger.info({ tokenId: token.id, orgId: token.orgId, scopes: token.scopes }, "token created");
      return { token: tokenMessage(token), key };
    },

    async listTokens(req) {
      const tokens = await store.listTokens(req.orgId || undefined);
      return { tokens: tokens.map(tokenMessage) };
    },

    async revokeToken(req) {
      const result = await revokeToken(deps, req.tokenId);
      if (result.changed) logger.info({ tokenId: result.record.id, orgId: result.record.orgId }, "token revoked");
      return { token: tokenMessage(result.record) };
    },

    async listOrganizations() {
      const orgs = await store.listOrganizations();
      return { organizations: orgs.map(organizationSummaryMessage) };
    },

    async setPartnerGrant(req) {
      const { relationship, grantedScopes } = await setPartnerGrant(deps, {
        parentOrgId: req.parentOrgId,
        childOrgId: req.childOrgId,
        grantedScopes: req.grantedScopes,
      });
      logger.info(
        { parentOrgId: relationship.parentOrgId, childOrgId: relationship.childOrgId, grantedScopes },
        "partner grant set",
      );
      return { relationship: relationshipMessage(relationship) };
    },

    async revokePartnerGrant(req) {
      const result = await revokePartnerGrant(deps, { parentOrgId: req.parentOrgId, childOrgId: req.childOrgId });
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
