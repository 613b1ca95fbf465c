import type { InvitationStatus, StoredInvitationStatus } from "./model.js";

/** An invitation not accepted within 14 days expires. */
export const INVITATION_TTL_MS = 14 * 24 * 60 * 60 * 1000;

/** Derives the invitation status: a pending invitation older than 14 days is expired. */
export function invitationStatus(
  user: { invitationStatus: StoredInvitationStatus; invitedAt: Date | null },
  now: Date,
): InvitationStatus {
  if (user.invitationStatus === "accepted") return "accepted";
  const invitedAt = user.invitedAt?.getTime() ?? Number.NEGATIVE_INFINITY;
  return now.getTime() - invitedAt > INVITATION_TTL_MS ? "expired" : "pending";
}

/**
 * Invitations at or after this instant are still pending. A seat is held by an active user
 * whose invitation is accepted or still pending (`active AND (accepted OR invited_at >=
 * cutoff)`); deactivated users and expired invitations hold none.
 */
export function pendingInvitationCutoff(now: Date): Date {
  return new Date(now.getTime() - INVITATION_TTL_MS);
}

export interface Seats {
  total: number;
  used: number;
  available: number;
}

/** Seat counts; `available` never goes below zero even when a cap was lowered under use. */
export function seats(total: number, used: number): Seats {
  return { total, used, available: Math.max(0, total - used) };
}
