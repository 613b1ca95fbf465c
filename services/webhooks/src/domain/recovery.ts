import { problem } from "@platform/kit/problems";

/** How far back a recovery may look: the 14 days (attempts older than that are history, not backlog). */
export const RECOVERY_WINDOW_MS = 14 * 24 * 3_600_000;

/** A recovery's `since`: at most 14 days before `now` and not after it (400 webhook-recovery-window-exceeded). */
export function checkRecoverySince(since: Date | undefined, now: Date): Date {
  if (!since || Number.isNaN(since.getTime())) {
    throw problem("invalid-field", "since is required: an RFC 3339 date-time.", { field: "since" });
  }
  if (since.getTime() < now.getTime() - RECOVERY_WINDOW_MS) {
    throw problem(
      "webhook-recovery-window-exceeded",
      `since must be at most 14 days back (not before ${new Date(now.getTime() - RECOVERY_WINDOW_MS).toISOString()}).`,
      { field: "since", maxDays: 14 },
    );
  }
  if (since.getTime() > now.getTime()) {
    throw problem("webhook-recovery-window-exceeded", "since must not be in the future.", { field: "since" });
  }
  return since;
}

/** A recovery's attempts counted by status. */
export interface RecoveryProgress {
  pending: number;
  succeeded: number;
  failed: number;
  /** When its latest attempt was sent; null when none was. */
  lastAttemptedAt: Date | null;
}

export interface RecoveryRecord {
  id: string;
  orgId: string;
  subscriptionId: string;
  since: Date;
  queued: number;
  createdAt: Date;
}

/** A recovery as the API shows it: running while any of its attempts is pending. */
export interface RecoveryView extends RecoveryRecord {
  status: "running" | "completed";
  delivered: number;
  failed: number;
  completedAt: Date | null;
}

export function recoveryView(r: RecoveryRecord, p: RecoveryProgress): RecoveryView {
  const running = p.pending > 0;
  return {
    ...r,
    status: running ? "running" : "completed",
    delivered: p.succeeded,
    failed: p.failed,
    // Nothing queued: done when created. Otherwise when its last attempt was sent.
    completedAt: running ? null : (p.lastAttemptedAt ?? r.createdAt),
  };
}

/**
 * When each of `count` attempts queued at `now` is due, in event order: a millisecond apart,
 * the last at `now`, so all are due at once and the worker (which claims the oldest due first)
 * takes them in the order the events happened.
 */
export function recoverySchedule(count: number, now: Date): Date[] {
  return Array.from({ length: count }, (_, i) => new Date(now.getTime() - (count - 1 - i)));
}
