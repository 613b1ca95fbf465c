import { PARTNER_SCOPE } from "@platform/kit/scopes";
import { defineRoute, type RouteSpec } from "../route.js";
import { apiKeyInfoSchema } from "../schemas/api-keys.js";
import type { JsonSchema } from "../schemas/common.js";

/**
 * The key that calls: its org, scopes, expiry and partner flag, answered from what the gateway
 * authenticated (no service call), for any valid key whatever its scopes. The developer console
 * reads it to show the key and to hide the actions its scopes do not allow.
 */
export function routes(): RouteSpec[] {
  return [
    defineRoute({
      method: "GET",
      url: "/api-keys/current",
      operationId: "getCurrentApiKey",
      summary: "The API key of the request: its organization, scopes, expiry and partner flag (never the secret)",
      tag: "API keys",
      scope: [],
      tier: "read",
      schema: { response: { 200: { $ref: "ApiKeyInfo#" } } },
      async handler(call) {
        const { token } = call;
        return {
          keyId: token.tokenId,
          orgId: token.orgId,
          scopes: token.scopes,
          expiresAt: token.expiresAt?.toISOString() ?? null,
          partner: token.scopes.includes(PARTNER_SCOPE),
          actingOn: call.actingOn ?? null,
          effectiveScopes: call.context.scopes ?? token.scopes,
        };
      },
    }),
  ];
}

export const schemas: readonly JsonSchema[] = [apiKeyInfoSchema];
