import { problem } from "@platform/kit/problems";
import { ALL_SCOPES, isScope, PARTNER_SCOPE, type Scope } from "@platform/kit/scopes";

function checkKnown(scopes: readonly string[], what: string, field: string): Scope[] {
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length > 0) {
    throw problem(
      "invalid-field",
      `Unknown ${what}: ${unknown.map((s) => `'${s}'`).join(", ")}. Known scopes: ${ALL_SCOPES.join(", ")}.`,
      { field },
    );
  }
  // One canonical order (the spec's) keeps stored scopes and their events comparable.
  return ALL_SCOPES.filter((s) => scopes.includes(s));
}

/**
 * The scopes of a new token: all known, de-duplicated, and `partner:act-as-child` only for a
 * partner-admin organization. No scope at all is allowed (a token that can call nothing).
 */
export function validateTokenScopes(scopes: readonly string[], org: { id: string; partnerAdmin: boolean }): Scope[] {
  const valid = checkKnown(scopes, "scopes", "scopes");
  if (valid.includes(PARTNER_SCOPE) && !org.partnerAdmin) {
    throw problem(
      "invalid-field",
      `Scope '${PARTNER_SCOPE}' can be issued only to tokens of a partner-admin organization; ${org.id} is not one.`,
      { field: "scopes" },
    );
  }
  return valid;
}

/**
 * The scopes a child grants to its parent. Delegation is one level deep, so a child can
 * never pass `partner:act-as-child` on.
 */
export function validateGrantedScopes(scopes: readonly string[]): Scope[] {
  const valid = checkKnown(scopes, "granted scopes", "grantedScopes");
  if (valid.includes(PARTNER_SCOPE)) {
    throw problem("invalid-field", `Scope '${PARTNER_SCOPE}' cannot be granted: delegation is one level deep.`, {
      field: "grantedScopes",
    });
  }
  return valid;
}
