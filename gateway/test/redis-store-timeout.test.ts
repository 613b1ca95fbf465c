import { afterEach, describe, expect, it, vi } from "vitest";
import { type RedisScriptClient, redisRateLimitStore } from "../src/rate-limit/redis-store.js";

const buckets = [{ key: "{tok_t}:read", limit: 300, windowMs: 60_000 }];
const answer = [1, 0, 1, 60_000, ["0"]];

/** A client whose answers the test hands out itself. */
function clientAnswering(reply: () => Promise<unknown>): RedisScriptClient {
  return { evalSha: reply, eval: reply };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("the redis rate-limit store's own hit timeout", () => {
  it("fails a hit Redis does not answer within the timeout, so the limiter can let the request through", async () => {
    vi.useFakeTimers();
    const store = redisRateLimitStore({
      client: clientAnswering(() => new Promise(() => {})),
      prefix: "t:",
      timeoutMs: 250,
    });
    const hit = store.hit(buckets, 0);
    const failed = expect(hit).rejects.toThrow("Redis did not answer the rate-limit hit within 250 ms");
    await vi.advanceTimersByTimeAsync(249);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    await failed;
  });

  it("leaves no timer behind once Redis has answered, or has failed", async () => {
    vi.useFakeTimers();
    const ok = redisRateLimitStore({ client: clientAnswering(async () => answer), prefix: "t:" });
    const result = await ok.hit(buckets, 0);
    expect(result.allowed).toBe(true);
    expect(result.buckets[0]?.remaining).toBe(299);
    expect(vi.getTimerCount()).toBe(0);

    const broken = redisRateLimitStore({
      client: clientAnswering(async () => {
        throw new Error("ECONNRESET");
      }),
      prefix: "t:",
    });
    await expect(broken.hit(buckets, 0)).rejects.toThrow("ECONNRESET");
    expect(vi.getTimerCount()).toBe(0);
  });
});
