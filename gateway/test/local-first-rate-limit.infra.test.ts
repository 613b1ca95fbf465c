import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { localFirstRateLimitStore, MAX_UNCONFIRMED } from "../src/rate-limit/local-first-store.js";
import { memoryRateLimitStore } from "../src/rate-limit/memory-store.js";
import type { RedisScriptClient } from "../src/rate-limit/redis-store.js";
import type { RateLimitBucket } from "../src/rate-limit/store.js";
import { describeRateLimitStore } from "./rate-limit-store-contract.js";
import { redisForTests } from "./redis-for-tests.js";

const { redis, prefix } = redisForTests("lf");
const SYNC_MS = 5;

/** The shared client, counting the script runs that reach Redis. */
function counted(): { client: RedisScriptClient; runs: () => number } {
  let runs = 0;
  return {
    client: {
      evalSha: (sha, options) => {
        runs++;
        return redis.evalSha(sha, options);
      },
      eval: (script, options) => redis.eval(script, options),
    },
    runs: () => runs,
  };
}

const store = (client: RedisScriptClient = redis) => localFirstRateLimitStore({ client, prefix, syncMs: SYNC_MS });

// Its small buckets are all checked in Redis, so the shared contract holds as for the Redis store.
describeRateLimitStore("local-first redis", () => store());

describe("local-first rate-limit store", () => {
  const T0 = Date.parse("2026-01-15T12:00:00Z");
  const unique = () => `{t${randomBytes(6).toString("hex")}}`;

  it("answers on one instance exactly as buckets kept in one process do, with few round trips", async () => {
    const { client, runs } = counted();
    const local = store(client);
    const exact = memoryRateLimitStore();
    const tag = unique();
    // A read-sized bucket and a daily quota, and a short window so hits leave during the run.
    const read: RateLimitBucket = { key: `${tag}:read`, limit: 300, windowMs: 60_000 };
    const daily: RateLimitBucket = { key: `${tag}:daily`, limit: 2_000, windowMs: 86_400_000, kind: "fixed" };
    const quick: RateLimitBucket = { key: `${tag}:quick`, limit: 120, windowMs: 2_000 };
    let now = T0;
    let refused = 0;
    for (let i = 0; i < 1_500; i++) {
      now += i % 97 === 0 ? 700 : i % 5; // bursts, then pauses long enough for hits to leave
      const buckets = i % 3 === 0 ? [read, daily] : [quick, daily];
      const want = await exact.hit(buckets, now);
      expect(await local.hit(buckets, now), `hit ${i}`).toEqual(want);
      if (!want.allowed) refused++;
      if (i % 40 === 0) await sleep(SYNC_MS + 2); // let some batches reach Redis in between
    }
    await local.close();
    expect(refused).toBeGreaterThan(100); // the run did reach the limits
    // Hits near a limit are checked in Redis; the run keeps its buckets near theirs most of the time.
    expect(runs()).toBeLessThan(1_200);
  });

  it("sends what it allowed to Redis within the sync interval, and all of it on close", async () => {
    const local = store();
    const read = { key: `${unique()}:read`, limit: 300, windowMs: 60_000 };
    const now = Date.now();
    await local.hit([read], now); // not known here yet: checked in Redis
    for (let i = 1; i <= 5; i++) expect((await local.hit([read], now + i)).buckets[0]?.remaining).toBe(299 - i);
    expect(await redis.zCard(`${prefix}${read.key}`)).toBe(1);
    await sleep(SYNC_MS * 4);
    expect(await redis.zCard(`${prefix}${read.key}`)).toBe(6);
    await local.hit([read], now + 10);
    await local.close();
    expect(await redis.zCard(`${prefix}${read.key}`)).toBe(7);
  });

  it("sends a hit near its bucket's limit at once, before its request is answered", async () => {
    // A sync so long that only the near-limit rule can have sent the last hits.
    const local = localFirstRateLimitStore({ client: redis, prefix, syncMs: 60_000 });
    const read = { key: `${unique()}:read`, limit: 300, windowMs: 60_000 };
    const now = Date.now();
    for (let i = 0; i < 245; i++) await local.hit([read], now + i);
    // The same connection, so Redis has run whatever the store sent before this.
    expect(await redis.zCard(`${prefix}${read.key}`)).toBe(245);
    await local.close();
  });

  it("checks every hit of a small bucket in Redis", async () => {
    const { client, runs } = counted();
    const local = store(client);
    const write = { key: `${unique()}:write`, limit: 20, windowMs: 60_000 };
    for (let i = 0; i < 25; i++) await local.hit([write], T0 + i);
    expect(runs()).toBe(25);
  });

  it("lets two instances together pass a bucket by at most their unconfirmed hits, and refuses from Redis", async () => {
    const a = store();
    const b = store();
    const read = { key: `${unique()}:read`, limit: 300, windowMs: 60_000 };
    const now = Date.now();
    let allowed = 0;
    for (let i = 0; i < 400; i++) {
      const r = await (i % 2 === 0 ? a : b).hit([read], now + i);
      if (r.allowed) allowed++;
      else expect(r.retryAfterMs).toBeGreaterThan(0);
    }
    await Promise.all([a.close(), b.close()]);
    expect(allowed).toBeGreaterThanOrEqual(300);
    expect(allowed).toBeLessThanOrEqual(300 + MAX_UNCONFIRMED);
    expect(await redis.zCard(`${prefix}${read.key}`)).toBe(allowed);
  });

  it("does not count hits whose batch Redis refused, and asks Redis again afterwards", async () => {
    let failing = false;
    const errors: unknown[] = [];
    const flaky: RedisScriptClient = {
      evalSha: (sha, options) => (failing ? Promise.reject(new Error("ECONNRESET")) : redis.evalSha(sha, options)),
      eval: (script, options) => redis.eval(script, options),
    };
    const local = localFirstRateLimitStore({
      client: flaky,
      prefix,
      syncMs: SYNC_MS,
      onFlushError: (e) => errors.push(e),
    });
    const read = { key: `${unique()}:read`, limit: 300, windowMs: 60_000 };
    const now = Date.now();
    await local.hit([read], now);
    failing = true;
    await local.hit([read], now + 1); // allowed here; its batch fails
    await sleep(SYNC_MS * 4);
    expect(errors).toHaveLength(1);
    await expect(local.hit([read], now + 2)).rejects.toThrow("ECONNRESET");
    failing = false;
    expect((await local.hit([read], now + 3)).buckets[0]?.remaining).toBe(298);
    await local.close();
  });
});
