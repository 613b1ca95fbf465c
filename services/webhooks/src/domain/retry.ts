/** Waits after attempt 1, 2, … fails: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; then the event is given up. */
export const RETRY_SCHEDULE_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];

/** Jitter spreads retries of many events failing together: ±10 % of the scheduled wait. */
export const JITTER = 0.1;
/** A Retry-After longer than this is capped, so an endpoint cannot park its events for days. */
export const MAX_RETRY_AFTER_MS = 10 * 3_600_000;
/** A subscription whose attempts have failed continuously for this long is disabled. */
export const FAILING_DISABLE_AFTER_MS = 5 * 24 * 3_600_000;
/**
 * The longest an endpoint that is failing goes without an attempt while a retry chain is
 * running: the last wait of the schedule jittered up (a Retry-After is capped below it).
 */
export const LONGEST_RETRY_WAIT_MS = Math.max(...RETRY_SCHEDULE_MS, MAX_RETRY_AFTER_MS) * (1 + JITTER);
/**
 * A failure further than this after the previous one starts a new failure run: between
 * them no attempt was due, so the endpoint was not failing continuously, only unused (a
 * chain ran out, then a quiet spell). An hour over the longest wait, because a busy or
 * restarting worker sends a retry somewhat after it is due.
 */
export const FAILURE_RUN_BREAK_MS = LONGEST_RETRY_WAIT_MS + 3_600_000;
/** A 2xx within this time is a success. */
export const DELIVERY_TIMEOUT_MS = 15_000;

/** Retry-After as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(raw: string | undefined, now: Date): number | undefined {
  if (raw === undefined) return undefined;
  const value = raw.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now.getTime());
}

/**
 * When the attempt after failed attempt number `attempt` (of the event's retry chain) is due,
 * or undefined when the schedule is exhausted. A Retry-After later than the schedule wins
 * (capped); an earlier one does not make us retry sooner.
 */
export function nextRetryAt(
  attempt: number,
  failedAt: Date,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): Date | undefined {
  const base = RETRY_SCHEDULE_MS[attempt - 1];
  if (base === undefined) return undefined;
  const jittered = base * (1 - JITTER + 2 * JITTER * random());
  const wait = Math.max(jittered, Math.min(retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
  return new Date(failedAt.getTime() + Math.round(wait));
}

/** The outcome of one attempt, as the sender observed it. */
export interface AttemptOutcome {
  /** HTTP status, undefined when none came back (timeout, refused target, TLS or connection error). */
  status: number | undefined;
  retryAfter: string | undefined;
  error: string | undefined;
}

export type Verdict =
  | { kind: "succeeded" }
  | { kind: "retry"; at: Date }
  | { kind: "gave-up" }
  /** 410 Gone: the endpoint asks for no more deliveries; the subscription is disabled. */
  | { kind: "gone" };

/** What follows an attempt: success on 2xx; 410 disables; else a retry per the schedule until it runs out. */
export function verdictOf(
  outcome: AttemptOutcome,
  attempt: { number: number; retries: boolean },
  now: Date,
  random: () => number = Math.random,
): Verdict {
  const { status } = outcome;
  if (status !== undefined && status >= 200 && status < 300) return { kind: "succeeded" };
  if (status === 410) return { kind: "gone" };
  if (!attempt.retries) return { kind: "gave-up" };
  const at = nextRetryAt(attempt.number, now, parseRetryAfter(outcome.retryAfter, now), random);
  return at ? { kind: "retry", at } : { kind: "gave-up" };
}

/** Whether a subscription failing since `failingSince` has failed long enough (WEBHOOK_DISABLE_AFTER_MS) to be disabled. */
export function failingTooLong(
  failingSince: Date | null,
  now: Date,
  disableAfterMs: number = FAILING_DISABLE_AFTER_MS,
): boolean {
  return failingSince !== null && now.getTime() - failingSince.getTime() >= disableAfterMs;
}

/** A subscription's current run of failed attempts; both null after a success. */
export interface FailureRun {
  /** The first failure of the run. */
  failingSince: Date | null;
  /** The latest failure of the run. */
  lastFailureAt: Date | null;
}

/**
 * The run after an attempt sent at `at`: a success ends it; a failure continues it when it
 * comes within FAILURE_RUN_BREAK_MS of the run's latest failure, else starts a new one.
 * Attempts may be recorded out of order (several are in flight at once), so the latest
 * failure never moves back.
 */
export function failureRunAfter(run: FailureRun, failed: boolean, at: Date): FailureRun {
  if (!failed) return { failingSince: null, lastFailureAt: null };
  const { failingSince, lastFailureAt } = run;
  if (
    failingSince === null ||
    lastFailureAt === null ||
    at.getTime() - lastFailureAt.getTime() > FAILURE_RUN_BREAK_MS
  ) {
    return { failingSince: at, lastFailureAt: at };
  }
  return { failingSince, lastFailureAt: at > lastFailureAt ? at : lastFailureAt };
}

/** What an attempt's outcome does to its subscription, decided under the subscription's lock. */
export interface Settlement {
  run: FailureRun;
  /** When the event's next attempt is due; undefined when none follows. */
  retryAt?: Date;
  /** Disables the subscription with this reason. */
  disable?: "endpoint-gone" | "failing";
}

/**
 * Settles an attempt sent at `at` against its subscription as it is now: a 410 disables it,
 * as does a failure that makes the run five days long. A disabled subscription (now, or
 * already: by its owner or by another attempt meanwhile) gets no retry: it receives nothing
 * until it is re-enabled, and then only new events and the retries that were already queued.
 */
export function settle(
  verdict: Verdict,
  subscription: { enabled: boolean; run: FailureRun },
  at: Date,
  disableAfterMs: number = FAILING_DISABLE_AFTER_MS,
): Settlement {
  const run = failureRunAfter(subscription.run, verdict.kind !== "succeeded", at);
  let disable: Settlement["disable"];
  if (subscription.enabled && verdict.kind === "gone") disable = "endpoint-gone";
  else if (
    subscription.enabled &&
    verdict.kind !== "succeeded" &&
    failingTooLong(run.failingSince, at, disableAfterMs)
  ) {
    disable = "failing";
  }
  const retries = verdict.kind === "retry" && subscription.enabled && disable === undefined;
  return { run, ...(retries ? { retryAt: verdict.at } : {}), ...(disable ? { disable } : {}) };
}
