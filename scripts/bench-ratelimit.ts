/**
 * npm run bench -- --suite ratelimit: what the gateway's rate-limit stores cost, side by side in
 * one run. The same hits (read tier and daily quota, over --tokens tokens, sent at an even
 * --rate) go to the store that checks every hit in Redis (`RATE_LIMIT_SYNC_MS=0`) and to the
 * local-first store (`RATE_LIMIT_SYNC_MS`, 10 ms), in turns. For each: script runs per hit, the
 * script's own time in Redis per hit (INFO commandstats, as deltas), Redis's CPU per hit (every
 * redis-server on this machine, from /proc) and this process's CPU per hit (the gateway's side).
 *
 *   npm run bench -- --suite ratelimit [--hits 20000] [--rate 2000] [--tokens 1000] [--rounds 2]
 *
 * Needs Redis (REDIS_URL, redis://127.0.0.1:6379); its keys live under a prefix of their own
 * and are deleted at the end.
 */
import { randomBytes } from "node:crypto";
import { createClient } from "redis";
import { bucketsFor } from "../gateway/src/rate-limit/limiter.js";
import { localFirstRateLimitStore } from "../gateway/src/rate-limit/local-first-store.js";
import { type RedisScriptClient, redisRateLimitStore } from "../gateway/src/rate-limit/redis-store.js";
import type { RateLimitStore } from "../gateway/src/rate-limit/store.js";
import { cpuMs, loadAverage, pidsNamed, sleep, stringFlags, suiteArgs } from "./bench-support.js";

const args = suiteArgs(
  stringFlags({ hits: "20000", rate: "2000", tokens: "1000", rounds: "2", "sync-ms": "10" }),
  "usage: npm run bench -- --suite ratelimit [--hits N] [--rate HITS_PER_SECOND] [--tokens N] [--rounds N] [--sync-ms MS]",
);
const hits = Number(args.hits);
const rate = Number(args.rate);
const tokens = Number(args.tokens);
const syncMs = Number(args["sync-ms"]);

const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const redis = await createClient({ url, disableOfflineQueue: true }).connect();
const prefix = `bench-rl-${randomBytes(4).toString("hex")}:`;
let runs = 0;
// As the gateway gives it (no node-redis command timer), counting the script runs.
const timed = redis.withCommandOptions({ timeout: 0 });
const client: RedisScriptClient = {
  evalSha: (sha, options) => {
    runs++;
    return timed.evalSha(sha, options);
  },
  eval: (script, options) => {
    runs++;
    return timed.eval(script, options);
  },
};

const redisCpuMs = () => pidsNamed("redis-server").reduce((sum, pid) => sum + (cpuMs(pid) ?? 0), 0);

/** Cumulative script calls and microseconds in Redis (EVALSHA and EVAL). */
async function scriptStats(): Promise<{ calls: number; usec: number }> {
  const info = await redis.info("commandstats");
  let calls = 0;
  let usec = 0;
  for (const m of info.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+),usec=(\d+)/gm)) {
    calls += Number(m[1]);
    usec += Number(m[2]);
  }
  return { calls, usec };
}

interface Row {
  store: string;
  hitsPerSecond: number;
  runsPerHit: number;
  scriptUs: number;
  redisUs: number;
  selfUs: number;
  refused: number;
}

async function measure(name: string, store: RateLimitStore): Promise<Row> {
  runs = 0;
  let refused = 0;
  const stats0 = await scriptStats();
  const redis0 = redisCpuMs();
  const self0 = process.cpuUsage();
  const t0 = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < hits; i++) {
    // Open loop: each hit at its time, the ones due together sent together.
    const wait = t0 + (i * 1000) / rate - performance.now();
    if (wait > 1) await sleep(wait);
    const buckets = bucketsFor("read", { tokenId: `tok_${name}_${i % tokens}` });
    inFlight.push(
      store.hit(buckets, Date.now()).then((r) => {
        if (!r.allowed) refused++;
      }),
    );
    if (inFlight.length >= 1000) await Promise.all(inFlight.splice(0));
  }
  await Promise.all(inFlight);
  await store.close?.();
  const seconds = (performance.now() - t0) / 1000;
  const self = process.cpuUsage(self0);
  const stats = await scriptStats();
  return {
    store: name,
    hitsPerSecond: hits / seconds,
    runsPerHit: runs / hits,
    scriptUs: (stats.usec - stats0.usec) / hits,
    redisUs: ((redisCpuMs() - redis0) / hits) * 1000,
    selfUs: ((self.user + self.system) / 1000 / hits) * 1000,
    refused,
  };
}

console.error(
  `${hits} hits at ${rate}/s over ${tokens} tokens, ${args.rounds} round(s); load average ${loadAverage()}`,
);
const rows: Row[] = [];
try {
  for (let round = 1; round <= Number(args.rounds); round++) {
    for (const [name, make] of [
      ["every hit in Redis", () => redisRateLimitStore({ client, prefix })],
      [`local-first (${syncMs} ms)`, () => localFirstRateLimitStore({ client, prefix, syncMs })],
    ] as const) {
      console.error(`round ${round}: ${name}…`);
      // Each round's tokens are new, so both stores start from empty buckets.
      rows.push(await measure(`${name} r${round}`, make()));
    }
  }
} finally {
  for await (const keys of redis.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
    if (keys.length > 0) await redis.del(keys);
  }
  await redis.close();
}

console.log(
  "\n| store | hits/s | script runs per hit | script µs per hit (Redis) | Redis CPU µs per hit | client CPU µs per hit | refused |",
);
console.log("|---|---|---|---|---|---|---|");
for (const r of rows) {
  console.log(
    `| ${r.store} | ${r.hitsPerSecond.toFixed(0)} | ${r.runsPerHit.toFixed(3)} | ${r.scriptUs.toFixed(1)} | ${r.redisUs.toFixed(1)} | ${r.selfUs.toFixed(1)} | ${r.refused} |`,
  );
}
