import { createHash } from "node:crypto";
import { idSequence } from "@platform/kit/ids";
import type { BucketState, RateLimitBucket, RateLimitResult, RateLimitStore } from "./store.js";

/**
 * One script, so checking every bucket and counting the hit in all of them is atomic across
 * gateway instances. Sliding buckets are sorted sets of hit times (unique members, so two
 * hits in the same millisecond both count); fixed buckets are plain counters per window, so
 * a daily quota of 50,000 costs one key instead of 50,000 set members.
 *
 * The same script also records hits a gateway has already allowed on its own (the local-first
 * store, local-first-store.ts): they are added to their buckets first, unconditionally, and only
 * then is the checked hit, if there is one, weighed against the limits.
 *
 * KEYS[i]: bucket key. ARGV: now, the checked hit's member ("" for none), how many of the oldest
 * hit times to return, then per bucket: limit, windowMs, kind, checked (1/0), the number of hits
 * to add, and those hits (time and member each for a sliding bucket, nothing for a fixed one).
 * Returns: allowed (0/1), retryAfterMs, then per bucket: its count after this call, resetMs and
 * the times of its oldest hits (at most the asked number).
 */
const SCRIPT = `
local now = tonumber(ARGV[1])
local member = ARGV[2]
local oldestWanted = tonumber(ARGV[3])
local n = #KEYS
local limits, windows, kinds, checked, counts = {}, {}, {}, {}, {}
local allowed = 1
local retry = 0
local a = 4
for i = 1, n do
  local key = KEYS[i]
  local limit, window, kind = tonumber(ARGV[a]), tonumber(ARGV[a + 1]), ARGV[a + 2]
  checked[i] = ARGV[a + 3] == "1"
  local adds = tonumber(ARGV[a + 4])
  a = a + 5
  limits[i], windows[i], kinds[i] = limit, window, kind
  local count
  if kind == "fixed" then
    if adds > 0 then
      count = redis.call("INCRBY", key, adds)
      -- A window's key is new when it holds only these hits: it lives until the window ends.
      if count == adds then redis.call("PEXPIRE", key, window - (now % window)) end
    else
      count = tonumber(redis.call("GET", key) or "0")
    end
  else
    for j = 1, adds do
      redis.call("ZADD", key, ARGV[a], ARGV[a + 1])
      a = a + 2
    end
    if adds > 0 then redis.call("PEXPIRE", key, window) end
    redis.call("ZREMRANGEBYSCORE", key, "-inf", now - window)
    count = redis.call("ZCARD", key)
  end
  counts[i] = count
  if checked[i] and count >= limit then
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
if member == "" then allowed = 0 end
local out = { allowed, retry }
for i = 1, n do
  local key, window = KEYS[i], windows[i]
  local reset
  local oldest = {}
  if kinds[i] == "fixed" then
    reset = window - (now % window)
    if allowed == 1 and checked[i] then
      redis.call("INCR", key)
      redis.call("PEXPIRE", key, reset)
      counts[i] = counts[i] + 1
    end
  else
    if allowed == 1 and checked[i] then
      redis.call("ZADD", key, now, member)
      redis.call("PEXPIRE", key, window)
      counts[i] = counts[i] + 1
    end
    local entries = redis.call("ZRANGE", key, 0, oldestWanted - 1, "WITHSCORES")
    for j = 2, #entries, 2 do oldest[#oldest + 1] = entries[j] end
    if oldest[1] then reset = tonumber(oldest[1]) + window - now else reset = 0 end
  end
  out[#out + 1] = counts[i]
  out[#out + 1] = reset
  out[#out + 1] = oldest
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
 * of timers alive into the old generation (docs/benchmarks/gateway.md, "Encoded once, and the
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

/** One bucket in one run of the script. */
export interface BucketCall {
  bucket: RateLimitBucket;
  /** Its key in Redis (`bucketKey`). */
  redisKey: string;
  /** Whether the run's hit is weighed against this bucket and counted in it. */
  checked: boolean;
  /** Times of hits already allowed elsewhere, to record first and unconditionally. */
  adds: readonly number[];
}

/** A bucket as Redis holds it after the run. */
export interface BucketReply {
  /** Hits in the window, the run's own hit included when it was allowed. */
  count: number;
  resetMs: number;
  /** Times of the oldest hits in the window, ascending; empty for a fixed bucket. */
  oldest: number[];
}

export interface ScriptReply {
  /** Whether the checked hit was allowed; false when the run checked none. */
  allowed: boolean;
  retryAfterMs: number;
  buckets: BucketReply[];
}

export interface BucketScriptOptions extends RedisRateLimitStoreOptions {
  /** How many of a sliding bucket's oldest hit times a run returns. */
  oldestWanted?: number;
}

/** The script, run on one client: the one place that knows its arguments and its reply. */
export interface BucketScript {
  /** A bucket's key in Redis at `nowMs`: a fixed bucket has one key per window. */
  keyOf(bucket: RateLimitBucket, nowMs: number): string;
  /** Records every call's adds, then weighs one hit against the checked buckets when `check`. */
  run(calls: readonly BucketCall[], nowMs: number, check: boolean): Promise<ScriptReply>;
}

export function redisBucketScript({
  client,
  prefix,
  timeoutMs = HIT_TIMEOUT_MS,
  oldestWanted = 1,
}: BucketScriptOptions): BucketScript {
  // Sorted-set members must be unique across instances and hits: a per-store random prefix and a counter.
  const nextMember = idSequence("");
  async function send(keys: string[], args: string[]): Promise<unknown> {
    try {
      return await client.evalSha(SCRIPT_SHA1, { keys, arguments: args });
    } catch (err) {
      // After a Redis restart or failover the script cache is empty; EVAL loads it again.
      if (!(err instanceof Error) || !err.message.startsWith("NOSCRIPT")) throw err;
      return client.eval(SCRIPT, { keys, arguments: args });
    }
  }
  return {
    keyOf: (b, nowMs) =>
      b.kind === "fixed" ? `${prefix}${b.key}:${Math.floor(nowMs / b.windowMs)}` : `${prefix}${b.key}`,
    async run(calls, nowMs, check) {
      const keys: string[] = [];
      const args = [String(nowMs), check ? `${nowMs}:${nextMember()}` : "", String(oldestWanted)];
      for (const { bucket: b, redisKey, checked, adds } of calls) {
        keys.push(redisKey);
        const kind = b.kind ?? "sliding";
        args.push(String(b.limit), String(b.windowMs), kind, checked ? "1" : "0", String(adds.length));
        if (kind === "sliding") for (const t of adds) args.push(String(t), `${t}:${nextMember()}`);
      }
      const reply = (await answeredWithin(send(keys, args), timeoutMs)) as unknown[];
      const buckets: BucketReply[] = calls.map((_, i) => ({
        count: Number(reply[2 + i * 3]),
        resetMs: Number(reply[3 + i * 3]),
        oldest: (reply[4 + i * 3] as unknown[]).map(Number),
      }));
      return { allowed: Number(reply[0]) === 1, retryAfterMs: Number(reply[1]), buckets };
    },
  };
}

/** What a run of the script tells the limiter about one request's buckets. */
export function resultOf(buckets: readonly RateLimitBucket[], reply: ScriptReply): RateLimitResult {
  const states: BucketState[] = buckets.map((b, i) => ({
    key: b.key,
    limit: b.limit,
    remaining: Math.max(0, b.limit - reply.buckets[i]!.count),
    resetMs: reply.buckets[i]!.resetMs,
  }));
  return { allowed: reply.allowed, retryAfterMs: reply.retryAfterMs, buckets: states };
}

/**
 * Buckets in Redis, shared by every gateway instance, with every hit checked there: one round
 * trip per request. Time is the gateway's clock, not Redis's, so tests can move it; instances
 * should run NTP-synchronised clocks.
 */
export function redisRateLimitStore(options: RedisRateLimitStoreOptions): RateLimitStore {
  const script = redisBucketScript(options);
  return {
    async hit(buckets: RateLimitBucket[], nowMs: number): Promise<RateLimitResult> {
      const calls = buckets.map((bucket) => ({
        bucket,
        redisKey: script.keyOf(bucket, nowMs),
        checked: true,
        adds: [],
      }));
      return resultOf(buckets, await script.run(calls, nowMs, true));
    },
  };
}
