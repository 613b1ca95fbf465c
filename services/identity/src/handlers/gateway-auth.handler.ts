import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  type GatewayAuthService,
  RESOLVE_API_KEYS_MAX,
  type ResolveApiKeyResponse,
} from "@platform/contracts/identity";
import { requestContext } from "@platform/kit/connect";
import { problem } from "@platform/kit/problems";
import type { TokenRecord } from "../domain/model.js";
import { tokenMessage } from "../messages.js";
import type { Store } from "../store/index.js";

function requireGateway(ctx: HandlerContext): void {
  if (requestContext(ctx).principal !== "gateway") {
    throw problem("missing-trust-header", "This RPC serves the gateway's own look-ups only.");
  }
}

type ResolvedKey = Omit<ResolveApiKeyResponse, "$typeName">;

/** What both key look-ups answer for a token. */
function resolvedKey(token: TokenRecord): ResolvedKey {
  const { id, orgId, scopes, expireTime, revokeTime } = tokenMessage(token);
  return { tokenId: id, orgId, scopes, expireTime, revokeTime };
}

/**
 * The gateway's look-ups. Revoked and expired tokens are returned as they are: the gateway
 * tells unknown-subscription from subscription-expired, and caches the answer.
 */
export function gatewayAuthHandlers(store: Store): ServiceImpl<typeof GatewayAuthService> {
  return {
    async resolveApiKey(req, ctx) {
      requireGateway(ctx);
      const token = await store.findTokenByHash(req.keyHash.toLowerCase());
      if (!token) throw problem("unknown-subscription", "The API key is unknown.");
      return resolvedKey(token);
    },
    async resolveApiKeys(req, ctx) {
      requireGateway(ctx);
      if (req.keyHashes.length > RESOLVE_API_KEYS_MAX) {
        throw problem("invalid-request", `At most ${RESOLVE_API_KEYS_MAX} key hashes per call.`);
      }
      // Answered by the hash as sent, which is what the gateway looks its keys up by.
      const sent = new Map(req.keyHashes.map((h) => [h.toLowerCase(), h]));
      const tokens: Record<string, ResolvedKey> = {};
      for (const token of await store.findTokensByHashes([...sent.keys()])) {
        tokens[sent.get(token.keyHash) ?? token.keyHash] = resolvedKey(token);
      }
      return { tokens };
    },
    async resolveDelegation(req, ctx) {
      requireGateway(ctx);
      const relationship = await store.findRelationship(req.parentOrgId, req.childOrgId);
      if (!relationship || relationship.revokedAt) {
        // One answer for "not a child", "unknown" and "revoked", so nothing leaks.
        throw problem("cross-org-delegation-forbidden", `Organization ${req.childOrgId} is not a managed child.`);
      }
      return { grantedScopes: relationship.grantedScopes };
    },
  };
}
