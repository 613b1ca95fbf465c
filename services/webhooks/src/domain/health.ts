import type { SubscriptionRecord } from "./model.js";

/** The window of recentSuccessRate: attempts sent in the last 24 hours. */
export const HEALTH_WINDOW_MS = 24 * 3_600_000;

export type EndpointStatus = "healthy" | "failing" | "disabled";

/** What the attempts of a subscription say about its endpoint. */
export interface AttemptStats {
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
  /** Attempts sent within HEALTH_WINDOW_MS, and how many of them succeeded. */
  recentSent: number;
  recentSucceeded: number;
}

export interface Health {
  status: EndpointStatus;
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
  /** 0..1; null when nothing was sent in the window. */
  recentSuccessRate: number | null;
}

export const NO_ATTEMPTS: AttemptStats = {
  lastSuccessAt: null,
  lastFailureAt: null,
  recentSent: 0,
  recentSucceeded: 0,
};

/**
 * A subscription's health: disabled while it is; failing while it is in a failure run (its
 * latest settled attempts failed, none succeeded since: the run the auto-disable measures);
 * healthy otherwise (including before any attempt).
 */
export function healthOf(s: Pick<SubscriptionRecord, "enabled" | "failingSince">, stats: AttemptStats): Health {
  const status: EndpointStatus = !s.enabled ? "disabled" : s.failingSince !== null ? "failing" : "healthy";
  return {
    status,
    lastSuccessAt: stats.lastSuccessAt,
    lastFailureAt: stats.lastFailureAt,
    recentSuccessRate: stats.recentSent === 0 ? null : stats.recentSucceeded / stats.recentSent,
  };
}
