/**
 * A counting bucket. `sliding` is a rolling log: a hit at t counts while now < t + windowMs.
 * `fixed` counts per window aligned to multiples of windowMs since the Unix epoch, so a
 * day-long fixed window is exactly one UTC day, at the cost of one counter instead of a log.
 */
export interface RateLimitBucket {
  key: string;
  limit: number;
  windowMs: number;
  kind?: "sliding" | "fixed";
}

export interface BucketState {
  key: string;
  limit: number;
  /** Hits left in the window, this request included when it was allowed. */
  remaining: number;
  /** Milliseconds until the bucket regains a hit: its oldest counted hit leaves, or its fixed window ends. */
  resetMs: number;
}

export interface RateLimitResult {
  allowed: boolean;
  /** When refused: milliseconds until every full bucket has room again; 0 when allowed. */
  retryAfterMs: number;
  buckets: BucketState[];
}

/**
 * Counts a request in several buckets at once, all or nothing: the hit is recorded in every
 * bucket only when every bucket has room, so a refused request never consumes quota.
 */
export interface RateLimitStore {
  hit(buckets: RateLimitBucket[], nowMs: number): Promise<RateLimitResult>;
  /** Records what it still holds, for a clean shutdown (a store that holds nothing has none). */
  close?(): Promise<void>;
}
