/** When and how long the client waits before sending a call again. */
export interface RetryOptions {
  /** Retries after the first attempt (the spec suggests about 5 attempts in all). Default 4. */
  maxRetries: number;
  /** First backoff; it doubles per retry. Default 1000 ms. */
  baseDelayMs: number;
  /** Cap of one backoff. Default 30 000 ms. */
  maxDelayMs: number;
  /**
   * Statuses that are retried. Default 429 (after its Retry-After) and the transient 5xx
   * (500, 502, 503, 504): the spec calls 5xx safe to retry, and a write's transaction never
   * half-commits. No other 4xx is ever retried, whatever this says.
   */
  retryOn: readonly number[];
  /**
   * A Retry-After longer than this is not waited out: the error is thrown at once (a used-up
   * daily quota answers with hours). Default 120 000 ms.
   */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryOptions = {
  maxRetries: 4,
  baseDelayMs: 1_000,
  maxDelayMs: 30_000,
  retryOn: [429, 500, 502, 503, 504],
  maxRetryAfterMs: 120_000,
};

/** The policy that never retries (`retry: false`). */
export const NO_RETRY: RetryOptions = { ...DEFAULT_RETRY, maxRetries: 0 };

export function retryPolicy(option: Partial<RetryOptions> | false | undefined, base = DEFAULT_RETRY): RetryOptions {
  if (option === false) return NO_RETRY;
  return { ...base, ...option };
}

/** A status the policy retries: 429 and 5xx only, never another 4xx. */
export function isRetriableStatus(status: number, policy: RetryOptions): boolean {
  return (status === 429 || status >= 500) && policy.retryOn.includes(status);
}

/**
 * Exponential backoff with "equal jitter": half of the doubled delay fixed, half random, so
 * clients that failed together do not come back together and none retries at once.
 */
export function backoffMs(retry: number, policy: RetryOptions, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** Retry-After in milliseconds: delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, nowMs: number = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/**
 * The wait before retry number `retry` (0-based) after an answer: at least its Retry-After
 * when it sent one (plus up to 250 ms of jitter, never less), else the backoff.
 */
export function delayAfter(
  retry: number,
  retryAfter: number | undefined,
  policy: RetryOptions,
  random: () => number = Math.random,
): number {
  if (retryAfter !== undefined) return retryAfter + Math.round(random() * 250);
  return backoffMs(retry, policy, random);
}

/** Waits `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
