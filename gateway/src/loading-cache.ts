import { LRUCache } from "lru-cache";

export interface LoadingCacheOptions {
  max: number;
  /** Time to live of an entry; 0 disables caching. */
  ttlMs: number;
  /** The clock the TTL is measured on (the gateway's Clock, so tests can move it). */
  now: () => number;
  /** Where in an entry's life a read starts its refresh: a fraction in [0, 1). Random by default. */
  refreshPoint?: () => number;
  /** How many background refreshes may be in flight at once (MAX_REFRESHING by default). */
  maxRefreshing?: number;
  /**
   * How long the refreshes that reads find due are gathered before they start, together, in
   * one turn of the event loop: a loader that batches the loads of one turn (the API-key
   * look-ups' DataLoader) then sends them as one call. 0 (the default) starts each at once.
   */
  refreshGatherMs?: number;
}

/** What a loader returns: the value, and optionally a shorter life for it (negative answers). */
export interface Loaded<V> {
  value: V;
  ttlMs?: number;
}

interface Flight<V> {
  promise: Promise<V>;
  purged: boolean;
}

interface Entry<V> {
  value: V;
  /** From this time on, a read answers from the entry and reloads it in the background. */
  refreshAt: number;
}

/**
 * Entries are refreshed somewhere between half and four fifths of their life, at a point
 * drawn per entry: keys that were loaded together (a deploy, a burst of new tokens) would
 * otherwise all expire in the same second, and every request in that second would wait for
 * a look-up (docs/benchmarks/gateway.md, "A refreshed token cache").
 */
const randomRefreshPoint = () => 0.5 + Math.random() * 0.3;

/** How long a failed background refresh waits before a read tries again (the entry still serves). */
const REFRESH_RETRY_MS = 1000;

/**
 * Background refreshes in flight at once. Entries past their refresh point wait for a read,
 * so after a lull every key read again reaches it in the same second: with 1,000 keys the
 * gateway sent identity ~1,000 ResolveApiKey calls in the first second of traffic, and that
 * second's p99 was the run's worst (docs/benchmarks/gateway.md, "Refreshes in step"). A read that finds
 * the refreshes busy answers from the entry as before and leaves its refresh to a later read;
 * between the refresh point and the TTL there are at least a fifth of the TTL (6 s by default)
 * for it, while two refreshes at a time renew hundreds of keys a second. The API-key cache,
 * whose loader batches, gathers its refreshes instead and allows a batch's worth (auth.ts's
 * KEY_REFRESHES).
 */
export const MAX_REFRESHING = 2;

/**
 * A TTL cache that loads missing entries once however many requests ask at the same time,
 * and whose purge also wins against a load already in flight: the answer of a look-up that
 * started before a revocation is never stored.
 *
 * An entry still in use is reloaded in the background before it expires (refresh-ahead), so
 * a request waits for a look-up only for a key it has not used within one TTL. The TTL stays
 * the bound on how old an answer can be: a refresh that fails leaves the entry to expire.
 */
export class LoadingCache<V extends {}> {
  readonly #lru: LRUCache<string, Entry<V>>;
  readonly #flights = new Map<string, Flight<V>>();
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #refreshPoint: () => number;
  readonly #maxRefreshing: number;
  readonly #refreshGatherMs: number;
  #refreshing = 0;
  /** Refreshes gathered for the next start, by key (counted in #refreshing already). */
  readonly #gathered = new Map<string, { entry: Entry<V>; load: () => Promise<Loaded<V>> }>();
  #gatherTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: LoadingCacheOptions) {
    this.#ttlMs = options.ttlMs;
    this.#now = options.now;
    this.#refreshPoint = options.refreshPoint ?? randomRefreshPoint;
    this.#maxRefreshing = options.maxRefreshing ?? MAX_REFRESHING;
    this.#refreshGatherMs = options.refreshGatherMs ?? 0;
    this.#lru = new LRUCache<string, Entry<V>>({
      max: options.max,
      ttl: Math.max(options.ttlMs, 1),
      // The clock is read on every check: a cached "now" would ignore a test clock's jumps.
      ttlResolution: 0,
      perf: { now: options.now },
    });
  }

  get(key: string, load: () => Promise<Loaded<V>>): Promise<V> {
    const hit = this.#lru.get(key);
    if (hit !== undefined) {
      if (
        this.#refreshing < this.#maxRefreshing &&
        this.#now() >= hit.refreshAt &&
        !this.#flights.has(key) &&
        !this.#gathered.has(key)
      ) {
        this.#refreshing++;
        if (this.#refreshGatherMs > 0) this.#gather(key, hit, load);
        else this.#refresh(key, hit, load);
      }
      return Promise.resolve(hit.value);
    }
    return this.#flights.get(key)?.promise ?? this.#load(key, load);
  }

  delete(key: string): void {
    this.#lru.delete(key);
    if (this.#gathered.delete(key)) this.#refreshing--;
    const flight = this.#flights.get(key);
    if (flight) {
      flight.purged = true;
      this.#flights.delete(key);
    }
  }

  #gather(key: string, entry: Entry<V>, load: () => Promise<Loaded<V>>): void {
    this.#gathered.set(key, { entry, load });
    if (this.#gatherTimer !== undefined) return;
    this.#gatherTimer = setTimeout(() => {
      this.#gatherTimer = undefined;
      const due = [...this.#gathered];
      this.#gathered.clear();
      for (const [k, { entry: e, load: l }] of due) {
        // A read that found the entry gone meanwhile is loading the key already.
        if (this.#flights.has(k)) this.#refreshing--;
        else this.#refresh(k, e, l);
      }
    }, this.#refreshGatherMs);
    // A gathered refresh is never a reason to keep the process alive.
    this.#gatherTimer.unref();
  }

  /** Reloads an entry in the background; its place among the refreshes is taken already. */
  #refresh(key: string, entry: Entry<V>, load: () => Promise<Loaded<V>>): void {
    this.#load(key, load)
      .catch(() => {
        // The entry serves on until it expires; the next read past this point tries again.
        entry.refreshAt = this.#now() + REFRESH_RETRY_MS;
      })
      .finally(() => {
        this.#refreshing--;
      });
  }

  #load(key: string, load: () => Promise<Loaded<V>>): Promise<V> {
    const flight: Flight<V> = {
      purged: false,
      promise: load().then(
        ({ value, ttlMs }) => {
          if (this.#flights.get(key) === flight) this.#flights.delete(key);
          const ttl = Math.min(ttlMs ?? this.#ttlMs, this.#ttlMs);
          if (!flight.purged && ttl > 0) {
            this.#lru.set(key, { value, refreshAt: this.#now() + ttl * this.#refreshPoint() }, { ttl });
          }
          return value;
        },
        (err: unknown) => {
          if (this.#flights.get(key) === flight) this.#flights.delete(key);
          throw err;
        },
      ),
    };
    this.#flights.set(key, flight);
    return flight.promise;
  }
}
