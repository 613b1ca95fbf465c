import type { AttemptRecord, AttemptTrigger } from "./model.js";

/** A pending attempt, due at `now`, that nobody has tried yet. */
export function pendingAttempt(a: {
  id: string;
  subscriptionId: string;
  event: { id: string; type: string };
  attempt: number;
  trigger: AttemptTrigger;
  retryStep: number | null;
  now: Date;
}): AttemptRecord {
  return {
    id: a.id,
    subscriptionId: a.subscriptionId,
    eventId: a.event.id,
    eventType: a.event.type,
    attempt: a.attempt,
    trigger: a.trigger,
    status: "pending",
    scheduledAt: a.now,
    attemptedAt: null,
    responseStatus: null,
    durationMs: null,
    error: null,
    nextRetryAt: null,
    retryStep: a.retryStep,
    createdAt: a.now,
  };
}
