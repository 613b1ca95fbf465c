import { closedObject, nullable, nullableTimestamp } from "./common.js";

/** What GET /api-keys/current says about the key that called it: never the key itself. */
export const apiKeyInfoSchema = closedObject(
  {
    keyId: { type: "string", description: "The key's token id (the id the request log and the audit name)" },
    orgId: { type: "string", description: "org_ id of the organization the key belongs to" },
    scopes: { type: "array", items: { type: "string" }, description: "The scopes issued to the key" },
    expiresAt: nullableTimestamp("When the key stops working; null: never"),
    partner: {
      type: "boolean",
      description: "The key holds partner:act-as-child: it may act on the organizations its org manages",
    },
    actingOn: nullable(
      "string",
      "The child organization of X-Platform-Acting-On, when the request sent one; null otherwise",
    ),
    effectiveScopes: {
      type: "array",
      items: { type: "string" },
      description:
        "The scopes this request may exercise: the key's, intersected with the child's grant when acting on one",
    },
  },
  { id: "ApiKeyInfo", description: "The API key that made the request, as the gateway authenticated it" },
);
