import type { Organization } from "@platform/contracts/identity";
import type { Clock } from "@platform/kit/clock";
import { problem } from "@platform/kit/problems";
import { shapeEntitlements } from "../domain/entitlements.js";
import { applyOrganizationPatch, type OrganizationPatch, validateOrganizationPatch } from "../domain/organizations.js";
import { pendingInvitationCutoff } from "../domain/seats.js";
import { checkExpectedVersion } from "../domain/versions.js";
import { organizationUpdatedEvent } from "../events/outbox-events.js";
import { entitlementsMessage, organizationMessage } from "../messages.js";
import type { OrganizationStore, Store, TxStore } from "../store/index.js";

// The organization use cases: reading the caller's organization and its entitlements, and
// changing it (PATCH) under its row lock. The handlers map the RPCs onto these and open the
// write the call's Idempotency-Key guards.

export const organizationNotFound = (id: string) =>
  problem("organization-not-found", `Organization ${id} was not found.`);

/** The organization `id` (404 organization-not-found when there is none). */
export async function loadOrganization(reads: Pick<OrganizationStore, "findOrganization">, id: string) {
  const org = await reads.findOrganization(id);
  if (!org) throw organizationNotFound(id);
  return org;
}

/** The entitlements of an organization: its plan's features and its seats as now used. */
export async function organizationEntitlements(
  reads: Pick<Store, "findOrganization" | "countSeatHolders">,
  clock: Clock,
  orgId: string,
) {
  const org = await loadOrganization(reads, orgId);
  const used = await reads.countSeatHolders(org.id, pendingInvitationCutoff(clock.now()));
  return entitlementsMessage(shapeEntitlements(org, used));
}

/**
 * The write a change goes out in, opened by the caller for the call (once per
 * Idempotency-Key): `change` runs in it, and what the write answers is the use case's answer.
 */
export type OrganizationWrite<R> = (change: (w: TxStore) => Promise<{ organization: Organization }>) => Promise<R>;

/** A PATCH of an organization: the fields as sent, and the version its If-Match names. */
export interface OrganizationChange {
  orgId: string;
  patch: OrganizationPatch;
  expectedVersion: bigint;
}

/**
 * Changes an organization. The patch is checked before the write; in it, the organization
 * under its row lock must be at the expected version; the change enqueues organization.updated.
 */
export async function updateOrganization<R>(
  clock: Clock,
  cmd: OrganizationChange,
  write: OrganizationWrite<R>,
): Promise<R> {
  const { orgId, expectedVersion } = cmd;
  const patch = validateOrganizationPatch(cmd.patch);
  return write(async (w) => {
    const org = await w.lockOrganization(orgId);
    if (!org) throw organizationNotFound(orgId);
    checkExpectedVersion(org.version, expectedVersion, "organization");
    const { next, changedFields } = applyOrganizationPatch(org, patch, clock.now());
    await w.updateOrganization(next);
    await w.enqueue(organizationUpdatedEvent(next, changedFields));
    // Read again: the answer carries the administrator the organization view joins.
    return { organization: organizationMessage(await loadOrganization(w, orgId)) };
  });
}
