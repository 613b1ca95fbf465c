import { createHash } from "node:crypto";
import { idSequence } from "@platform/kit/ids";
import type { BucketState, RateLimitBucket, RateLimitResult, RateLimitStore } from "./store.js";

/**
 * One script, so checking every bucket and counting the hit in all of them is atomic across
 * gateway instances. Sliding buckets are sorted sets of hit times (unique members, so two
 * hits in the same millisecond both count); fixed buckets are plain counters per window, so
 * a daily quota of 50,000 costs one key instead of 50,000 set members.
 *
 * KEYS[i]: bucket key. ARGV: now, member, then limit, windowMs, kind per bucket.
 * Returns: allowed (0/1), retryAfterMs, then remaining and resetMs per bucket.
 */
const SCRIPT = `
local now = tonumber(ARGV[1])
local member = ARGV[2]
local n = #KEYS
local limits, windows, kinds, counts = {}, {}, {}, {}
local allowed = 1
local retry = 0
for i = 1, n do
  local key = KEYS[i]
  local limit = tonumber(ARGV[(i - 1) * 3 + 3])
  local window = tonumber(ARGV[(i - 1) * 3 + 4])
  local kind = ARGV[(i - 1) * 3 + 5]
  limits[i], windows[i], kinds[i] = limit, window, kind
  local count
  if kind == "fixed" then
    count = tonumber(redis.call("GET", key) or "0")
  else
    redis.call("ZREMRANGEBYSCORE", key, "-inf", now - window)
    count = redis.call("ZCARD", key)
  end
  counts[i] = count
  if count >= limit then
    allowed = 0
    local wait
    if kind == "fixed" then
      wait = window - (now % window)
    else
      local entry = redis.call("ZRANGE", key, count - limit, count - limit, "WITHSCORES")
      wait = tonumber(entry[2]) + window - now
    end
    if wait > retry then retry = wait end
  end
end
local out = { allowed, retry }
for i = 1, n do
  local key, limit, window = KEYS[i], limits[i], windows[i]
  local reset
  if kinds[i] == "fixed" then
    reset = window - (now % window)
    if allowed == 1 then
      redis.call("INCR", key)
      redis.call("PEXPIRE", key, reset)
    end
  else
    if allowed == 1 then
      redis.call("ZADD", key, now, member)
      redis.call("PEXPIRE", key, window)
    end
    local oldest = redis.call("ZRANGE", key, 0, 0, "WITHSCORES")
    if oldest[2] then reset = tonumber(oldest[2]) + window - now else reset = 0 end
  end
  local remaining = limit - counts[i] - allowed
  if remaining < 0 then remaining = 0 end
  out[#out + 1] = remaining
  out[#out + 1] = reset
end
return out
`;

const SCRIPT_SHA1 = createHash("sha1").update(SCRIPT).digest("hex");

/** The slice of a node-redis client the store uses. */
export interface RedisScriptClient {
  evalSha(sha1: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

export interface RedisRateLimitStoreOptions {
  /**
   * A connected node-redis client; its owner connects and closes it. Give it without
   * node-redis's own command timeout (`client.withCommandOptions({ timeout: 0 })`): the store
   * times each hit itself, more cheaply (see `answeredWithin`).
   */
  client: RedisScriptClient;
  /** Prepended to every key, e.g. "platform:rl:". */
  prefix: string;
  /** How long a hit waits for Redis before it fails (and the limiter lets the request through). */
  timeoutMs?: number;
}

/** node-redis's own default command timeout, kept as the store's. */
export const HIT_TIMEOUT_MS = 5000;

/**
 * `answer`, or a rejection once `ms` have passed without one: a plain timer, cleared when the
 * answer comes. Why not node-redis's command timeout: it makes an `AbortSignal.timeout` per
 * command, whose timer outlives the command (a weak one, fired or finalised seconds later),
 * with an EventTarget listener added and removed and a DOMException when it fires. On every
 * proxied request that cost the gateway up to a tenth of its CPU per read and kept thousands
 * of timers alive into the old generation (docs/benchmarks.md, "Encoded once, and the
 * rate-limit hit's timer").
 */
function answeredWithin<T>(answer: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Redis did not answer the rate-limit hit within ${ms} ms`)), ms);
    answer.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/**
 * Buckets in Redis, shared by every gateway instance. Time is the gateway's clock, not
 * Redis's, so tests can move it; instances should run NTP-synchronised clocks.
 */
export function redisRateLimitStore({
  client,
  prefix,
  timeoutMs = HIT_TIMEOUT_MS,
}: RedisRateLimitStoreOptions): RateLimitStore {
  // Sorted-set members must be unique across instances and hits: a per-store random prefix and a counter.
  const nextMember = idSequence("");
  async function run(keys: string[], args: string[]): Promise<unknown> {
    try {
      return await client.evalSha(SCRIPT_SHA1, { keys, arguments: args });
    } catch (err) {
      // After a Redis restart or failover the script cache is empty; EVAL loads it again.
      if (!(err instanceof Error) || !err.message.startsWith("NOSCRIPT")) throw err;
      return client.eval(SCRIPT, { keys, arguments: args });
    }
  }

  return {
    async hit(buckets: RateLimitBucket[], nowMs: number): Promise<RateLimitResult> {
      const keys = buckets.map((b) =>
        b.kind === "fixed" ? `${prefix}${b.key}:${Math.floor(nowMs / b.windowMs)}` : `${prefix}${b.key}`,
      );
      const args = [String(nowMs), `${nowMs}:${nextMember()}`];
      for (const b of buckets) args.push(String(b.limit), String(b.windowMs), b.kind ?? "sliding");
      const reply = (await answeredWithin(run(keys, args), timeoutMs)) as number[];
      const states: BucketState[] = buckets.map((b, i) => ({
        key: b.key,
        limit: b.limit,
        remaining: Number(reply[2 + i * 2]),
        resetMs: Number(reply[3 + i * 2]),
      }));
      return { allowed: Number(reply[0]) === 1, retryAfterMs: Number(reply[1]), buckets: states };
    },
  };
}
