import { describe, expect, it } from "vitest";
import type { RateLimitStore } from "../src/rate-limit/store.js";

const MINUTE = 60_000;
const DAY = 86_400_000;
const T0 = Date.parse("2026-01-15T12:00:00Z");

/** What every RateLimitStore must do; run against the memory store and against Redis. */
export function describeRateLimitStore(name: string, makeStore: () => RateLimitStore): void {
  describe(`${name} rate-limit store`, () => {
    const unique = () => `t${Math.random().toString(36).slice(2)}`;

    it("counts hits and reports what is left", async () => {
      const store = makeStore();
      const key = unique();
      const first = await store.hit([{ key, limit: 3, windowMs: MINUTE }], T0);
      expect(first).toEqual({
        allowed: true,
        retryAfterMs: 0,
        buckets: [{ key, limit: 3, remaining: 2, resetMs: MINUTE }],
      });
      const second = await store.hit([{ key, limit: 3, windowMs: MINUTE }], T0 + 10_000);
      expect(second.buckets[0]).toEqual({ key, limit: 3, remaining: 1, resetMs: 50_000 });
    });

    it("rolls the window: a hit leaves exactly windowMs after it was counted", async () => {
      const store = makeStore();
      const bucket = { key: unique(), limit: 2, windowMs: MINUTE };
      expect((await store.hit([bucket], T0)).allowed).toBe(true);
      expect((await store.hit([bucket], T0 + 30_000)).allowed).toBe(true);
      const full = await store.hit([bucket], T0 + 30_000);
      expect(full).toMatchObject({ allowed: false, retryAfterMs: 30_000 });
      expect(full.buckets[0]).toMatchObject({ remaining: 0, resetMs: 30_000 });
      expect(await store.hit([bucket], T0 + 59_999)).toMatchObject({ allowed: false, retryAfterMs: 1 });
      const freed = await store.hit([bucket], T0 + 60_001);
      expect(freed.allowed).toBe(true);
      expect(freed.buckets[0]).toMatchObject({ remaining: 0, resetMs: 29_999 });
      expect(await store.hit([bucket], T0 + 60_001)).toMatchObject({ allowed: false, retryAfterMs: 29_999 });
    });

    it("counts in every bucket or in none", async () => {
      const store = makeStore();
      const small = { key: unique(), limit: 1, windowMs: MINUTE };
      const large = { key: unique(), limit: 5, windowMs: MINUTE };
      await store.hit([small, large], T0);
      const refused = await store.hit([small, large], T0 + 1);
      expect(refused.allowed).toBe(false);
      expect(refused.buckets.map((b) => b.remaining)).toEqual([0, 4]);
      expect((await store.hit([large], T0 + 2)).buckets[0]?.remaining).toBe(3);
    });

    it("counts hits of the same millisecond separately", async () => {
      const store = makeStore();
      const bucket = { key: unique(), limit: 5, windowMs: MINUTE };
      const results = await Promise.all(Array.from({ length: 7 }, () => store.hit([bucket], T0)));
      expect(results.filter((r) => r.allowed)).toHaveLength(5);
    });

    it("keeps fixed windows aligned to the epoch: a day is a UTC day", async () => {
      const store = makeStore();
      const day = { key: unique(), limit: 2, windowMs: DAY, kind: "fixed" as const };
      const beforeMidnight = Date.parse("2026-01-15T23:59:58.500Z");
      const first = await store.hit([day], beforeMidnight);
      expect(first.buckets[0]).toMatchObject({ remaining: 1, resetMs: 1_500 });
      await store.hit([day], beforeMidnight);
      expect(await store.hit([day], beforeMidnight + 1_000)).toMatchObject({ allowed: false, retryAfterMs: 500 });
      const nextDay = await store.hit([day], Date.parse("2026-01-16T00:00:00Z"));
      expect(nextDay).toMatchObject({ allowed: true, buckets: [{ remaining: 1, resetMs: DAY }] });
    });

    it("reports the wait of the slowest full bucket", async () => {
      const store = makeStore();
      const minute = { key: unique(), limit: 1, windowMs: MINUTE };
      const day = { key: unique(), limit: 1, windowMs: DAY, kind: "fixed" as const };
      await store.hit([minute, day], T0);
      expect(await store.hit([minute, day], T0 + 1_000)).toMatchObject({
        allowed: false,
        retryAfterMs: DAY / 2 - 1_000,
      });
    });
  });
}
