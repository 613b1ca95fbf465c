import type { BucketState, RateLimitBucket, RateLimitResult, RateLimitStore } from "./store.js";

interface SlidingLog {
  windowMs: number;
  /** Hit times, ascending. */
  hits: number[];
}

interface FixedCounter {
  windowMs: number;
  window: number;
  count: number;
}

/** How often idle buckets are dropped, so tokens that went quiet do not hold memory. */
const SWEEP_EVERY_MS = 60_000;

/** Buckets in this process only: the embedded runtime and tests. */
class MemoryRateLimitStore implements RateLimitStore {
  readonly #logs = new Map<string, SlidingLog>();
  readonly #counters = new Map<string, FixedCounter>();
  #lastSweep = 0;

  async hit(buckets: RateLimitBucket[], nowMs: number): Promise<RateLimitResult> {
    this.#sweep(nowMs);
    const current = buckets.map((b) => (b.kind === "fixed" ? this.#fixed(b, nowMs) : this.#sliding(b, nowMs)));
    const allowed = current.every((c) => c.count < c.bucket.limit);
    let retryAfterMs = 0;
    if (allowed) {
      for (const c of current) c.record();
    } else {
      for (const c of current) {
        if (c.count >= c.bucket.limit) retryAfterMs = Math.max(retryAfterMs, c.waitMs());
      }
    }
    const states: BucketState[] = current.map((c) => ({
      key: c.bucket.key,
      limit: c.bucket.limit,
      remaining: Math.max(0, c.bucket.limit - c.count - (allowed ? 1 : 0)),
      resetMs: c.resetMs(),
    }));
    return { allowed, retryAfterMs, buckets: states };
  }

  #sliding(bucket: RateLimitBucket, now: number) {
    let log = this.#logs.get(bucket.key);
    if (!log) {
      log = { windowMs: bucket.windowMs, hits: [] };
      this.#logs.set(bucket.key, log);
    }
    const { hits } = log;
    const firstLive = hits.findIndex((t) => t > now - bucket.windowMs);
    hits.splice(0, firstLive === -1 ? hits.length : firstLive);
    return {
      bucket,
      count: hits.length,
      record: () => hits.push(now),
      // Room comes back when enough of the oldest hits have left for the count to drop below the limit.
      waitMs: () => hits[hits.length - bucket.limit]! + bucket.windowMs - now,
      resetMs: () => (hits.length === 0 ? 0 : hits[0]! + bucket.windowMs - now),
    };
  }

  #fixed(bucket: RateLimitBucket, now: number) {
    const window = Math.floor(now / bucket.windowMs);
    let counter = this.#counters.get(bucket.key);
    if (!counter || counter.window !== window) {
      counter = { windowMs: bucket.windowMs, window, count: 0 };
      this.#counters.set(bucket.key, counter);
    }
    const c = counter;
    const untilWindowEnd = (window + 1) * bucket.windowMs - now;
    return {
      bucket,
      count: c.count,
      record: () => {
        c.count += 1;
      },
      waitMs: () => untilWindowEnd,
      resetMs: () => untilWindowEnd,
    };
  }

  #sweep(now: number): void {
    if (now - this.#lastSweep < SWEEP_EVERY_MS) return;
    this.#lastSweep = now;
    for (const [key, log] of this.#logs) {
      const newest = log.hits[log.hits.length - 1];
      if (newest === undefined || newest <= now - log.windowMs) this.#logs.delete(key);
    }
    for (const [key, c] of this.#counters) {
      if (c.window < Math.floor(now / c.windowMs)) this.#counters.delete(key);
    }
  }
}

export function memoryRateLimitStore(): RateLimitStore {
  return new MemoryRateLimitStore();
}
