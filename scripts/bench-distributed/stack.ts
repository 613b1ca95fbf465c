// The distributed bench's settings, the stack it measures (started by scripts/stack.sh when
// none answers; only what it started is stopped) and the CPU of that stack's processes.
import { execFileSync } from "node:child_process";
import { readlinkSync } from "node:fs";
import pg from "pg";

import {
  cpuMs,
  pidsNamed,
  portOpen,
  stackPid,
  stringFlags,
  suiteArgs,
  usageError,
  wholeNumber,
} from "../bench-support.js";
import { PROCESSES } from "../stack-processes.js";

export const values = suiteArgs(
  stringFlags({
    duration: "10",
    rates: "500,1000,1500",
    connections: "10,50",
    tokens: "1000",
    rounds: "1",
    skip: "",
    soak: "0",
    "soak-rate": "1000",
    "cold-rate": "1000",
    "tracing-rate": "400",
    "rpc-http": "1.1",
  }),
  `usage: npm run bench -- --suite distributed [--duration SECONDS] [--rates 500,1000,1500]
    [--connections 10,50] [--tokens 1000] [--rounds 1] [--skip closed,tracing,open,cold,deals,requestlog] [--soak SECONDS]
    [--soak-rate 1000] [--cold-rate 1000] [--tracing-rate 400] [--rpc-http 1.1]
Uses the stack on GATEWAY_PORT (default 8080) or starts one with scripts/stack.sh (and stops what it started);
a gateway that answers without a running gateway in STACK_RUN_DIR (default .run) is another stack's, and
the bench refuses it (its CPU columns come from that directory's pid files).
Rows: a bare fastify route, identity called directly, the floor proxy (the gateway's unavoidable hops
on bare node:http: bench-distributed/floor-proxy.ts) and the gateway, closed loop and at even rates
(open loop), and beside the gateway its twin with REQUEST_LOG=off (the request log's cost; LOG_OFF_PORT,
default GATEWAY_PORT + 10); the gateway at --cold-rate with --tokens keys it has not seen (each first request waits for
its key's look-up); POST /deals; the cost of observability (tracing): two more gateways of the stack's
build, nothing configured against tracing at 10% (Zipkin) + Prometheus scraping every 15 s, sent
--tracing-rate req/s each at the same time; Zipkin and Prometheus are scripts/observability.sh's
(ZIPKIN_PORT, PROMETHEUS_PORT), started when they do not run. --rounds N alternates the closed-loop rows N times (median round, ratios
per round), and the open-loop rows (the bare route, the floor proxy, the gateway) N times at each rate (the round
with the median p99, every round's p99 listed). Each open-loop row is also printed second by second: its p99 beside
each process's CPU, the GC and event-loop delay of the gateway and identity (scraped from their /metrics each second),
the load generator's own loop delay, and the machine's steal and idle time, so a bad second shows whose it was. --soak S first sends --soak-rate req/s (1,000) through the gateway for S seconds: past the token cache's
30 s TTL when S > 30, so the row shows what key look-ups cost a long run. When the Postgres has autovacuum off, the stack's databases are VACUUMed first.
--rpc-http 2 makes the bench's own calls to identity (the direct row, the floor proxy's, the admin
plane's) over HTTP/2: for a stack built before services took unary calls over HTTP/1.1 (2026-11-29),
so an earlier build can be measured by this bench.`,
);
export const duration = Number(values.duration);
export const rates = values.rates.split(",").map(Number);
export const connectionCounts = values.connections.split(",").map(Number);
export const tokenCount = Number(values.tokens);
export const rounds = Math.max(1, Number(values.rounds));
export const skip = new Set(values.skip.split(",").filter(Boolean));
export const soakSeconds = Number(values.soak);
export const soakRate = Number(values["soak-rate"]);
export const coldRate = Number(values["cold-rate"]);
export const tracingRate = Number(values["tracing-rate"]);
const rpcHttpFlag = values["rpc-http"];
if (rpcHttpFlag !== "1.1" && rpcHttpFlag !== "2") usageError(`--rpc-http takes 1.1 or 2, not '${rpcHttpFlag}'`);
export const rpcHttp: "1.1" | "2" = rpcHttpFlag;
// Checked before anything starts: a bad number would otherwise surface as a 401 or a NaN row.
for (const [flag, value, least] of [
  ["duration", duration, 1],
  ["tokens", tokenCount, 1],
  ["soak", soakSeconds, 0],
  ["soak-rate", soakRate, 1],
  ["cold-rate", coldRate, 1],
  ["tracing-rate", tracingRate, 1],
  ...rates.map((r) => ["rates", r, 1] as const),
  ...connectionCounts.map((c) => ["connections", c, 1] as const),
] as const) {
  wholeNumber(flag, value, least);
}

export const env = process.env;
export const port = (name: string, fallback: number) => Number(env[name] ?? fallback);
export const GATEWAY = `http://127.0.0.1:${port("GATEWAY_PORT", 8080)}`;
export const IDENTITY = `http://127.0.0.1:${port("IDENTITY_PORT", 7101)}`;
export const ADMIN = `http://127.0.0.1:${port("ADMIN_PORT", 8081)}`;
/** The /metrics of the gateway and identity: the first two of scripts/stack.sh's METRICS_ORDER. */
const metricsBase = port("METRICS_BASE_PORT", 9460);
export const GATEWAY_METRICS = `http://127.0.0.1:${metricsBase}/metrics`;
export const IDENTITY_METRICS = `http://127.0.0.1:${metricsBase + 1}/metrics`;
export const RUN_DIR = env.STACK_RUN_DIR ?? ".run";
export const DB_PREFIX = env.STACK_DB_PREFIX ?? "platform_";
export const PG_URL = env.PG_URL ?? "postgres://postgres@127.0.0.1:5432";
export const REDIS_URL = env.REDIS_URL ?? "redis://127.0.0.1:6379";
export const CONTEXT_SECRET = env.PLATFORM_CONTEXT_SECRET ?? "dev-context-secret-change-me-0123456789";
export const ADMIN_SECRET = env.PLATFORM_ADMIN_SECRET ?? "dev-admin-secret-change-me";
export const API = "/api/v1alpha1";
export { PROCESSES };

export const log = (line: string) => process.stderr.write(`${line}\n`);

// ---------------------------------------------------------------- the stack

export const alreadyRunning = new Map(PROCESSES.map((n) => [n, stackPid(RUN_DIR, n, "pid")]));
export let startedStack = false;
if (!(await portOpen(GATEWAY))) {
  log(`no gateway on ${GATEWAY}; starting the stack (scripts/stack.sh start, run dir ${RUN_DIR})…`);
  startedStack = true;
  // A run that fails before its own `finally` (a half-started stack, the fixtures) still stops
  // what it started: the monitor sees the error that is about to end the process.
  process.once("uncaughtExceptionMonitor", stopWhatWeStarted);
  execFileSync("bash", ["scripts/stack.sh", "start"], { stdio: ["ignore", "inherit", "inherit"] });
} else if (stackPid(RUN_DIR, "gateway") === undefined) {
  // The CPU columns come from the run directory's pid files: a gateway of another stack would be
  // measured against processes that serve none of the requests.
  log(
    `a gateway answers on ${GATEWAY}, but ${RUN_DIR} has no running gateway: it is another stack's. ` +
      "Set STACK_RUN_DIR (and the ports) to that stack's, or stop it.",
  );
  process.exit(1);
}

/**
 * The node binary the stack's gateway runs on (scripts/stack.sh picks the images' major): the
 * bench's own servers (the bare route, the floor proxy) run on it too, so that the rows they are
 * compared with differ in what they do, not in their Node.
 */
export const STACK_NODE = (() => {
  const pid = stackPid(RUN_DIR, "gateway");
  try {
    return pid === undefined ? process.execPath : readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return process.execPath;
  }
})();
export const STACK_NODE_VERSION = execFileSync(STACK_NODE, ["-v"], { encoding: "utf8" }).trim();

/** Synchronous, so that it also runs from the uncaught-exception monitor before the process ends. */
export function stopWhatWeStarted(): void {
  if (!startedStack) return;
  startedStack = false;
  if ([...alreadyRunning.values()].every((pid) => pid === undefined)) {
    execFileSync("bash", ["scripts/stack.sh", "stop"], { stdio: ["ignore", "inherit", "inherit"] });
    return;
  }
  // Part of the stack ran before: stop only the processes this run added.
  for (const name of PROCESSES) {
    const pid = stackPid(RUN_DIR, name, "pid");
    if (pid !== undefined && alreadyRunning.get(name) === undefined) {
      process.kill(pid, "SIGTERM");
      log(`${name}: stopped (pid ${pid})`);
    }
  }
}

// ---------------------------------------------------------------- CPU of each process

export const pgPool = new pg.Pool({ connectionString: `${PG_URL}/postgres`, max: 1 });
pgPool.on("error", () => {});

/**
 * With autovacuum off (as on this machine's shared Postgres) every run's dead rows stay: each
 * published outbox row leaves one, and each run was slower than the one before it (Postgres's
 * CPU per create grew from 1.1 to 9–12 ms over a morning of runs), which no A/B survives. The
 * bench then VACUUMs the stack's databases before it measures, as autovacuum would have.
 */
export async function vacuumIfAutovacuumOff(): Promise<void> {
  const setting = await pgPool.query<{ autovacuum: string }>("SHOW autovacuum");
  if (setting.rows[0]?.autovacuum !== "off") return;
  const dbs = await pgPool.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE $1", [
    `${DB_PREFIX.replace(/_/g, "\\_")}%`,
  ]);
  const started = Date.now();
  for (const { datname } of dbs.rows) {
    const client = new pg.Client({ connectionString: `${PG_URL}/${datname}` });
    await client.connect();
    try {
      await client.query("VACUUM (ANALYZE)");
    } finally {
      await client.end();
    }
  }
  log(`autovacuum is off on this Postgres: vacuumed ${dbs.rows.length} databases first (${Date.now() - started} ms)`);
}

/** Postgres backends serving this stack's databases (their CPU is the database's share). */
export async function postgresPids(): Promise<number[]> {
  const res = await pgPool.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE datname LIKE $1 AND pid <> pg_backend_pid()",
    [`${DB_PREFIX.replace(/_/g, "\\_")}%`],
  );
  return res.rows.map((r) => r.pid);
}

/** CPU ms of each process; Postgres per backend pid, since connections come and go. */
export type CpuSample = Map<string, number>;

/** The bench's own servers (the bare route, the floor proxy), sampled with the stack's processes. */
const ownServers = new Map<string, number>();
export function sampleServer(name: string, pid: number | undefined): void {
  if (pid !== undefined) ownServers.set(name, pid);
}

/**
 * The processes the bench samples, each under its column's name (Postgres per backend, as
 * `postgres:<pid>`): the stack's, Redis, the Kafka broker (this machine's only JVM, counted as
 * the events bench counts it) and the bench's own servers.
 */
export async function sampledPids(): Promise<Array<[string, number]>> {
  const pids: Array<[string, number]> = [];
  for (const name of PROCESSES) {
    const pid = stackPid(RUN_DIR, name, "child");
    if (pid !== undefined) pids.push([name, pid]);
  }
  for (const pid of pidsNamed("redis-server")) pids.push(["redis", pid]);
  for (const pid of pidsNamed("java")) pids.push(["kafka", pid]);
  for (const pid of await postgresPids()) pids.push([`postgres:${pid}`, pid]);
  for (const [name, pid] of ownServers) pids.push([name, pid]);
  return pids;
}

/** The CPU ms so far of `pids` (summed per name) and of the bench's own process, the load generator. */
export function cpuOf(pids: Array<[string, number]>): CpuSample {
  const sample: CpuSample = new Map();
  for (const [name, pid] of pids) {
    const ms = cpuMs(pid);
    if (ms !== undefined) sample.set(name, (sample.get(name) ?? 0) + ms);
  }
  const own = process.cpuUsage();
  sample.set("load generator", (own.user + own.system) / 1000);
  return sample;
}

export async function sampleCpu(): Promise<CpuSample> {
  return cpuOf(await sampledPids());
}

export function cpuPerRequest(before: CpuSample, after: CpuSample, requests: number): Record<string, number> {
  const out: Record<string, number> = {};
  if (requests === 0) return out;
  for (const [key, ms] of after) {
    // A backend that connected during the run counts from zero.
    const start = before.get(key) ?? (key.startsWith("postgres:") ? 0 : undefined);
    if (start === undefined) continue;
    const name = key.startsWith("postgres:") ? "postgres" : key;
    out[name] = (out[name] ?? 0) + (ms - start) / requests;
  }
  return out;
}
