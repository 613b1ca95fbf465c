import { createClient } from "redis";
import { describe, expect, it } from "vitest";
import { redisRateLimitStore } from "../src/rate-limit/redis-store.js";
import { describeRateLimitStore } from "./rate-limit-store-contract.js";
import { REDIS_URL, redisForTests } from "./redis-for-tests.js";

const { redis, prefix } = redisForTests("redis");
const store = () => redisRateLimitStore({ client: redis, prefix });

describeRateLimitStore("redis", store);

describe("redis rate-limit store", () => {
  const now = Date.parse("2026-01-15T12:00:00Z");

  it("allows exactly the limit under 50 concurrent hits", async () => {
    const bucket = { key: "{tok_concurrent}:write", limit: 20, windowMs: 60_000 };
    const daily = { key: "{tok_concurrent}:daily", limit: 50_000, windowMs: 86_400_000, kind: "fixed" as const };
    // Separate clients, so the hits really race on the server rather than queue on one socket.
    const clients = await Promise.all(Array.from({ length: 5 }, () => createClient({ url: REDIS_URL }).connect()));
    try {
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          redisRateLimitStore({ client: clients[i % clients.length]!, prefix }).hit([bucket, daily], now),
        ),
      );
      expect(results.filter((r) => r.allowed)).toHaveLength(20);
      expect(await redis.zCard(`${prefix}${bucket.key}`)).toBe(20);
      expect(await redis.get(`${prefix}${daily.key}:${Math.floor(now / 86_400_000)}`)).toBe("20");
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it("lets its keys expire with their window", async () => {
    const s = store();
    await s.hit(
      [
        { key: "{tok_ttl}:read", limit: 5, windowMs: 60_000 },
        { key: "{tok_ttl}:daily", limit: 5, windowMs: 86_400_000, kind: "fixed" },
      ],
      Date.now(),
    );
    const sliding = await redis.pTTL(`${prefix}{tok_ttl}:read`);
    expect(sliding).toBeGreaterThan(0);
    expect(sliding).toBeLessThanOrEqual(60_000);
    const dailyKey = `${prefix}{tok_ttl}:daily:${Math.floor(Date.now() / 86_400_000)}`;
    expect(await redis.pTTL(dailyKey)).toBeGreaterThan(0);
  });

  it("loads the script again after Redis forgot it", async () => {
    const s = store();
    await s.hit([{ key: "{tok_flush}:read", limit: 5, windowMs: 60_000 }], now);
    await redis.scriptFlush();
    const again = await s.hit([{ key: "{tok_flush}:read", limit: 5, windowMs: 60_000 }], now + 1);
    expect(again.buckets[0]?.remaining).toBe(3);
  });

  it("fails a hit that Redis holds past the store's own timeout, on a client without node-redis's timer", async () => {
    // As gateway/src/main.ts gives it: no per-command timeout of node-redis's own.
    const other = await createClient({ url: REDIS_URL }).connect();
    try {
      const s = redisRateLimitStore({ client: other.withCommandOptions({ timeout: 0 }), prefix, timeoutMs: 100 });
      const bucket = [{ key: "{tok_paused}:read", limit: 5, windowMs: 60_000 }];
      await s.hit(bucket, now);
      // Redis holds every write command (the script is one) until CLIENT UNPAUSE.
      await redis.sendCommand(["CLIENT", "PAUSE", "5000", "WRITE"]);
      try {
        await expect(s.hit(bucket, now + 1)).rejects.toThrow("Redis did not answer the rate-limit hit within 100 ms");
      } finally {
        await redis.sendCommand(["CLIENT", "UNPAUSE"]);
      }
    } finally {
      await other.close();
    }
  });
});
