import {
  type BucketCall,
  type BucketScript,
  type RedisRateLimitStoreOptions,
  redisBucketScript,
  redisRateLimitStore,
  resultOf,
  type ScriptReply,
} from "./redis-store.js";
import type { BucketState, RateLimitBucket, RateLimitResult, RateLimitStore } from "./store.js";

/**
 * Buckets with a smaller limit are checked in Redis on every hit: the per-minute write (20) and
 * availability (60) limits stay exact across instances, and a write costs far more than the
 * round trip anyway.
 */
export const LOCAL_MIN_LIMIT = 100;
/** A hit is allowed here only while a tenth of its bucket's limit would still be left after it. */
const HEADROOM = 0.1;
/** Hits this instance may allow in one bucket before Redis has confirmed them. */
export const MAX_UNCONFIRMED = 10;
/**
 * Oldest hit times each answer carries: a bucket stays decidable here until that many have left
 * since Redis last answered for it. Each is a sorted-set member Redis reads and sends; 16 cost
 * Redis a fifth more CPU per hit than 1 (docs/benchmarks/gateway.md, "Rate limits decided locally").
 */
export const OLDEST_WANTED = 8;
/**
 * Keys sent in one run of the script, so a long flush does not hold Redis for long. A batch
 * mixes tokens, so its keys span Redis Cluster slots: fine on the single Redis the gateway's
 * client talks to; on a Cluster each batch would have to be one slot's.
 */
const KEYS_PER_RUN = 200;
/** A bucket untouched this long is forgotten here; its next hit is checked in Redis again. */
const IDLE_MS = 60_000;

/** What this instance knows of one bucket key. */
interface KeyState {
  readonly key: string;
  bucket: RateLimitBucket;
  /** Redis has answered for the key, and no run of it has failed since. */
  known: boolean;
  /** Hits Redis held at its last answer, and the times of the oldest of them. */
  count: number;
  oldest: number[];
  /** Hits allowed here and not yet confirmed by Redis, oldest first; the first `sent` are on their way. */
  local: number[];
  sent: number;
  /** Checked hits on their way to Redis, counted as taken until it answers. */
  checking: number;
  lastUse: number;
}

export interface LocalFirstStoreOptions {
  /** The bucket script on Redis, returning OLDEST_WANTED hit times per bucket. */
  script: BucketScript;
  /** How long a hit allowed here waits before it is sent to Redis with the others of that moment. */
  syncMs: number;
  /** Told when a background flush fails; its hits are then not counted (as a failed check is not). */
  onFlushError?: (err: unknown) => void;
}

/**
 * Rate-limit buckets in Redis, with most hits decided in this process: a hit far from its limit
 * is allowed here and sent to Redis with the others of the next `syncMs`; a hit near its limit,
 * in a small bucket, or on a bucket this instance has not heard of lately is checked in Redis as
 * before. Every refusal comes from Redis, so Retry-After stays exact.
 *
 * What it gives up (README, "Rate limits"): on one instance nothing; its answers are those of a
 * check in Redis. With several instances, a hit allowed here reaches Redis within `syncMs`, or at
 * once when its bucket is near its limit; a bucket can be passed only by hits that land on other
 * instances within that time, by at most MAX_UNCONFIRMED per instance.
 */
export class LocalFirstRateLimitStore implements RateLimitStore {
  readonly #script: BucketScript;
  readonly #syncMs: number;
  readonly #onFlushError: (err: unknown) => void;
  readonly #states = new Map<string, KeyState>();
  readonly #dirty = new Set<KeyState>();
  readonly #inFlight = new Set<Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  /** The latest time a hit was made at: a flush prunes buckets as of then. */
  #now = 0;
  #lastSweep = 0;

  constructor({ script, syncMs, onFlushError = () => {} }: LocalFirstStoreOptions) {
    this.#script = script;
    this.#syncMs = syncMs;
    this.#onFlushError = onFlushError;
  }

  async hit(buckets: RateLimitBucket[], nowMs: number): Promise<RateLimitResult> {
    if (nowMs > this.#now) this.#now = nowMs;
    this.#sweep(nowMs);
    const states = buckets.map((b) => this.#state(b, nowMs));
    const counts: number[] = [];
    for (const s of states) {
      const count = this.#countIfRoom(s, nowMs);
      if (count === undefined) return this.#checkInRedis(buckets, states, nowMs);
      counts.push(count);
    }
    return this.#allowHere(states, counts, nowMs);
  }

  /** Sends what was allowed here and waits for Redis to confirm it; for a clean shutdown. */
  async close(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#flush();
    await Promise.allSettled([...this.#inFlight]);
  }

  #state(bucket: RateLimitBucket, nowMs: number): KeyState {
    const key = this.#script.keyOf(bucket, nowMs);
    let s = this.#states.get(key);
    if (!s) {
      s = { key, bucket, known: false, count: 0, oldest: [], local: [], sent: 0, checking: 0, lastUse: nowMs };
      this.#states.set(key, s);
    }
    s.bucket = bucket;
    s.lastUse = nowMs;
    return s;
  }

  /** Hits in the window by what this instance knows, or undefined when it cannot tell. */
  #count(s: KeyState, nowMs: number): number | undefined {
    if (!s.known) return undefined;
    let live = s.count;
    if (s.bucket.kind !== "fixed") {
      const since = nowMs - s.bucket.windowMs;
      let left = 0;
      while (left < s.oldest.length && s.oldest[left]! <= since) left++;
      // Every hit Redis reported may have left, including ones past the oldest it named.
      if (left === s.oldest.length && s.oldest.length < s.count) return undefined;
      live -= left;
    }
    return live + s.local.length + s.checking;
  }

  /** The bucket's count when this instance may allow the hit itself; undefined when Redis must check it. */
  #countIfRoom(s: KeyState, nowMs: number): number | undefined {
    const { limit } = s.bucket;
    if (limit < LOCAL_MIN_LIMIT || s.local.length >= MAX_UNCONFIRMED) return undefined;
    const count = this.#count(s, nowMs);
    return count !== undefined && count + 1 <= limit - Math.ceil(limit * HEADROOM) ? count : undefined;
  }

  /** Allows the hit here; `counts` are the buckets' counts before it. */
  #allowHere(states: KeyState[], counts: number[], nowMs: number): RateLimitResult {
    const buckets: BucketState[] = [];
    let nearLimit = false;
    for (const [i, s] of states.entries()) {
      s.local.push(nowMs);
      this.#dirty.add(s);
      const { limit } = s.bucket;
      const remaining = limit - counts[i]! - 1;
      if (remaining <= 2 * Math.ceil(limit * HEADROOM)) nearLimit = true;
      buckets.push({ key: s.bucket.key, limit, remaining, resetMs: this.#resetMs(s, nowMs) });
    }
    if (nearLimit) {
      // Sent now, before this request is answered: another instance that checks this bucket at
      // its limit, for a request sent after this answer, then finds this hit in Redis.
      this.#send(states);
    } else {
      this.#timer ??= setTimeout(() => this.#flush(), this.#syncMs).unref();
    }
    return { allowed: true, retryAfterMs: 0, buckets };
  }

  #resetMs(s: KeyState, nowMs: number): number {
    const { windowMs } = s.bucket;
    if (s.bucket.kind === "fixed") return windowMs - (nowMs % windowMs);
    const firstLive = s.oldest.find((t) => t > nowMs - windowMs) ?? s.local[0];
    return firstLive === undefined ? 0 : firstLive + windowMs - nowMs;
  }

  async #checkInRedis(buckets: RateLimitBucket[], states: KeyState[], nowMs: number): Promise<RateLimitResult> {
    // The bucket's hits allowed here go first, so Redis weighs this one against all of them.
    const calls = states.map((s) => this.#callFor(s, true));
    for (const s of states) s.checking++;
    try {
      const reply = await this.#run(states, calls, nowMs, true);
      return resultOf(buckets, reply);
    } finally {
      for (const s of states) s.checking--;
    }
  }

  #callFor(s: KeyState, checked: boolean): BucketCall {
    const adds = s.local.slice(s.sent);
    s.sent = s.local.length;
    this.#dirty.delete(s);
    return { bucket: s.bucket, redisKey: s.key, checked, adds };
  }

  /**
   * One run of the script. Runs share one connection, so Redis answers them in the order they
   * were sent: the hits a run carried are the first `sent` of each key's `local`, and the latest
   * answer is the latest state. (After a Redis restart, a run resent with EVAL can overtake one;
   * a count is then short for one answer, until the next.)
   */
  async #run(states: KeyState[], calls: BucketCall[], nowMs: number, check: boolean): Promise<ScriptReply> {
    try {
      const reply = await this.#script.run(calls, nowMs, check);
      states.forEach((s, i) => {
        this.#confirmed(s, calls[i]!.adds.length);
        s.known = true;
        s.count = reply.buckets[i]!.count;
        s.oldest = reply.buckets[i]!.oldest;
      });
      return reply;
    } catch (err) {
      // Not counted, as a failed check is not (the limiter fails open); the next hit asks Redis.
      for (const [i, s] of states.entries()) {
        this.#confirmed(s, calls[i]!.adds.length);
        s.known = false;
      }
      throw err;
    }
  }

  #confirmed(s: KeyState, n: number): void {
    s.local.splice(0, n);
    s.sent -= n;
  }

  #flush(): void {
    this.#timer = undefined;
    if (this.#dirty.size > 0) this.#send([...this.#dirty]);
  }

  /** Sends the states' unsent hits (and takes them off the dirty list); failures go to onFlushError. */
  #send(states: KeyState[]): void {
    for (let i = 0; i < states.length; i += KEYS_PER_RUN) {
      const chunk = states.slice(i, i + KEYS_PER_RUN);
      const calls = chunk.map((s) => this.#callFor(s, false));
      const run = this.#run(chunk, calls, this.#now, false).then(
        () => {},
        (err: unknown) => this.#onFlushError(err),
      );
      this.#inFlight.add(run);
      void run.finally(() => this.#inFlight.delete(run));
    }
  }

  #sweep(nowMs: number): void {
    if (nowMs - this.#lastSweep < IDLE_MS) return;
    this.#lastSweep = nowMs;
    for (const [key, s] of this.#states) {
      if (s.local.length === 0 && s.checking === 0 && nowMs - s.lastUse > IDLE_MS) this.#states.delete(key);
    }
  }
}

/**
 * The gateway's store on Redis as `RATE_LIMIT_SYNC_MS` chooses it: local-first, or with 0 every
 * hit checked in Redis. The gateway and the bench's floor proxy both take it from here.
 */
export function redisRateLimitStoreSyncedEvery(
  options: RedisRateLimitStoreOptions & Omit<LocalFirstStoreOptions, "script">,
): RateLimitStore {
  return options.syncMs === 0 ? redisRateLimitStore(options) : localFirstRateLimitStore(options);
}

/** The local-first store on a node-redis client (see redisRateLimitStore for the client's options). */
export function localFirstRateLimitStore(
  options: RedisRateLimitStoreOptions & Omit<LocalFirstStoreOptions, "script">,
): LocalFirstRateLimitStore {
  const { syncMs, onFlushError, ...redis } = options;
  return new LocalFirstRateLimitStore({
    script: redisBucketScript({ ...redis, oldestWanted: OLDEST_WANTED }),
    syncMs,
    ...(onFlushError ? { onFlushError } : {}),
  });
}
