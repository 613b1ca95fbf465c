import { problem } from "@platform/kit/problems";
import { ALL_SCOPES, type Scope } from "@platform/kit/scopes";
import type { OrganizationRecord } from "./model.js";

/** Who may manage whom: a partner-admin parent and a different child organization. */
export function checkPartnerPair(parent: OrganizationRecord, child: OrganizationRecord): void {
  if (parent.id === child.id) {
    throw problem("invalid-field", "An organization cannot be its own partner parent.", { field: "childOrgId" });
  }
  if (!parent.partnerAdmin) {
    throw problem(
      "invalid-field",
      `Organization ${parent.id} (${parent.name}) is not a partner-admin organization and cannot manage children.`,
      { field: "parentOrgId" },
    );
  }
}

/** A child has at most one active parent; re-granting to the same parent is an update. */
export function checkSingleParent(
  childOrgId: string,
  parentOrgId: string,
  activeParentOrgId: string | undefined,
): void {
  if (activeParentOrgId !== undefined && activeParentOrgId !== parentOrgId) {
    throw problem(
      "invalid-field",
      `Organization ${childOrgId} is already managed by ${activeParentOrgId}; revoke that relationship first.`,
      { field: "childOrgId" },
    );
  }
}

/**
 * What a partner token can exercise on a child now: its own scopes intersected with the
 * child's grant, in the spec's order.
 */
export function effectiveScopes(tokenScopes: readonly string[], granted: readonly string[]): Scope[] {
  return ALL_SCOPES.filter((s) => tokenScopes.includes(s) && granted.includes(s));
}
