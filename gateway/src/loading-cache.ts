import { LRUCache } from "lru-cache";

export interface LoadingCacheOptions {
  max: number;
  /** Time to live of an entry; 0 disables caching. */
  ttlMs: number;
  /** The clock the TTL is measured on (the gateway's Clock, so tests can move it). */
  now: () => number;
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

/**
 * A TTL cache that loads missing entries once however many requests ask at the same time,
 * and whose purge also wins against a load already in flight: the answer of a look-up that
 * started before a revocation is never stored.
 */
export class LoadingCache<V extends {}> {
  readonly #lru: LRUCache<string, V>;
  readonly #flights = new Map<string, Flight<V>>();
  readonly #ttlMs: number;

  constructor(options: LoadingCacheOptions) {
    this.#ttlMs = options.ttlMs;
    this.#lru = new LRUCache<string, V>({
      max: options.max,
      ttl: Math.max(options.ttlMs, 1),
      // The clock is read on every check: a cached "now" would ignore a test clock's jumps.
      ttlResolution: 0,
      perf: { now: options.now },
    });
  }

  get(key: string, load: () => Promise<Loaded<V>>): Promise<V> {
    const hit = this.#lru.get(key);
    if (hit !== undefined) return Promise.resolve(hit);
    const pending = this.#flights.get(key);
    if (pending) return pending.promise;
    const flight: Flight<V> = {
      purged: false,
      promise: load().then(
        ({ value, ttlMs }) => {
          if (this.#flights.get(key) === flight) this.#flights.delete(key);
          const ttl = Math.min(ttlMs ?? this.#ttlMs, this.#ttlMs);
          if (!flight.purged && ttl > 0) this.#lru.set(key, value, { ttl });
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

  delete(key: string): void {
    this.#lru.delete(key);
    const flight = this.#flights.get(key);
    if (flight) {
      flight.purged = true;
      this.#flights.delete(key);
    }
  }
}
