// The events bench's settings, its report, and the databases and processes it creates
// (scripts/bench-events.ts runs the phases).
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { createLogger } from "@platform/kit/logger";
import { type Admin, Kafka, logLevel } from "kafkajs";
import pg from "pg";
import { cpuMsOf, portOpen, sleep, stringFlags, suiteArgs } from "../bench-support.js";
import { PROCESSES } from "../build.js";

export const values = suiteArgs(
  {
    ...stringFlags({
      phases: "drain,relay,idle,restart,latency,analytics",
      events: "1000000",
      small: "10000",
      attempts: "10000",
      backlog: "20000",
      "stopped-events": "400",
      subscriptions: "9",
      rate: "100",
      seconds: "15",
      warmup: "5",
      cap: "32",
      caps20: "8",
      concurrency: "128",
      "port-base": "37000",
      "db-prefix": process.env.STACK_DB_PREFIX ?? "pipe_",
      "drain-timeout": "180",
      runtime: "compiled",
    }),
    "cpu-prof": { type: "string" },
    dist: { type: "string" },
  },
  "usage: npm run bench -- --suite events [--phases drain,drain1,drain20,relay,idle,restart,latency,analytics,fanout,stopped,stopped9,stopped1]\n" +
    "  [--attempts N] [--backlog N] [--stopped-events N] [--subscriptions N] [--rate N] [--seconds N] [--warmup S] [--cap N] [--caps20 N] [--concurrency N] [--port-base P]\n" +
    "  [--db-prefix X] [--events N] [--small N] [--drain-timeout S] [--cpu-prof DIR] [--dist DIR]\n" +
    "  [--runtime compiled|source]   compiled (default): npm run build, then node dist/<process>/main.js, as the\n" +
    "                                stack and the images run them; source: node --import tsx <entry>\n" +
    "  --dist DIR                    run the bundles of another build (e.g. an earlier commit's worktree's dist/,\n" +
    "                                built there) instead of building this one: before and after, same bench\n" +
    "  Processes keep the stack's compile cache (.run/compile-cache); NODE_DISABLE_COMPILE_CACHE=1 starts them without it.",
);
export const phases = new Set(values.phases.split(","));
export const attemptCount = Number(values.attempts);
export const rate = Number(values.rate);
export const seconds = Number(values.seconds);
/** Seconds of the latency phase's load sent before it measures (discarded): freshly started processes run JIT-cold code. */
export const warmupSeconds = Number(values.warmup);
if (!Number.isFinite(warmupSeconds) || warmupSeconds < 0)
  throw new Error(`--warmup must be a number of seconds, 0 or more, not '${values.warmup}'`);
export const portBase = Number(values["port-base"]);
export const prefix = values["db-prefix"];
export const PG_URL = process.env.PG_URL ?? "postgres://postgres@127.0.0.1:5432";
export const KAFKA_BROKERS = process.env.KAFKA_BROKERS ?? `127.0.0.1:${process.env.KAFKA_PORT ?? "19092"}`;
export const CONTEXT_SECRET = "bench-events-context-secret-0123456789";
export const ADMIN_SECRET = "bench-events-admin-secret-0123456789";
export const run = Date.now().toString(36);
export const logger = createLogger("bench-events", "error");
export const results: string[] = [];
export const report = (line: string) => {
  results.push(line);
  process.stderr.write(`${line}\n`);
};

// ---------------------------------------------------------------- helpers

export const fmt = (n: number) => n.toFixed(1);

export async function freshDatabase(name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: `${PG_URL}/postgres` });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  created.push(name);
  return `${PG_URL}/${name}`;
}
export const created: string[] = [];
export async function dropDatabases(): Promise<void> {
  const admin = new pg.Client({ connectionString: `${PG_URL}/postgres` });
  await admin.connect();
  for (const name of created) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}

export interface Proc {
  name: string;
  child: ChildProcess;
  startedAt: number;
  readyAt: number;
  log: () => string;
  stop: (signal?: NodeJS.Signals) => Promise<void>;
}
export const procs = new Set<Proc>();

if (values.runtime !== "compiled" && values.runtime !== "source")
  throw new Error(`--runtime must be compiled or source, not '${values.runtime}'`);
let built = false;

/**
 * The command line of a process: its bundle under dist/ (built once per bench run, as
 * `npm run stack` does), or the TypeScript entry through tsx with `--runtime source`.
 */
function commandOf(entry: string): string[] {
  if (values.runtime === "source") return ["--import", "tsx", entry];
  if (values.dist) {
    const main = `${values.dist}/${Object.entries(PROCESSES).find(([, e]) => e === entry)?.[0]}/main.js`;
    if (!existsSync(main)) throw new Error(`no bundle ${main} (build that tree first: npm run build)`);
    return [main];
  }
  if (!built) {
    process.stderr.write("building dist/ (npm run build; --runtime source skips it)…\n");
    const build = spawnSync("npm", ["run", "--silent", "build"], { stdio: ["ignore", "ignore", "inherit"] });
    if (build.status !== 0) throw new Error(`npm run build failed (exit ${build.status})`);
    built = true;
  }
  const name = Object.entries(PROCESSES).find(([, e]) => e === entry)?.[0];
  const main = name && `dist/${name}/main.js`;
  if (!main || !existsSync(main)) throw new Error(`no bundle for ${entry} (scripts/build.ts PROCESSES)`);
  return [main];
}

/** The node the processes run on: Node 22, as the images and `npm run stack` (scripts/stack-node.sh). */
export const PROCESS_NODE = execFileSync("bash", ["scripts/stack-node.sh"], {
  encoding: "utf8",
  stdio: ["ignore", "pipe", "inherit"],
}).trim();
export const PROCESS_NODE_VERSION = execFileSync(PROCESS_NODE, ["-v"], { encoding: "utf8" }).trim();
/** The node flags the processes run with on that node, as the images and the stack give them (scripts/node-flags.sh). */
const PROCESS_NODE_FLAGS = execFileSync("bash", ["scripts/node-flags.sh", PROCESS_NODE], { encoding: "utf8" })
  .split(/\s+/)
  .filter((flag) => flag !== "");

/** Starts the process of `entry` (compiled or through tsx) and waits until it listens on `port`. */
export async function startProc(name: string, entry: string, env: Record<string, string>, port: number): Promise<Proc> {
  const profile = values["cpu-prof"] ? ["--cpu-prof", `--cpu-prof-dir=${values["cpu-prof"]}`] : [];
  const startedAt = performance.now();
  const child = spawn(PROCESS_NODE, [...PROCESS_NODE_FLAGS, ...profile, ...commandOf(entry)], {
    env: {
      // The stack's compile cache (scripts/stack.sh), so a restart starts as the stack's does;
      // NODE_DISABLE_COMPILE_CACHE=1 measures one without it.
      NODE_COMPILE_CACHE: resolve(".run/compile-cache"),
      ...process.env,
      LOG_LEVEL: "warn",
      PLATFORM_CONTEXT_SECRET: CONTEXT_SECRET,
      KAFKA_BROKERS,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d) => {
    out = (out + d).slice(-20_000);
  });
  child.stderr?.on("data", (d) => {
    out = (out + d).slice(-20_000);
  });
  const proc: Proc = {
    name,
    child,
    startedAt,
    readyAt: 0,
    log: () => out,
    stop: (signal = "SIGTERM") =>
      new Promise<void>((resolve) => {
        procs.delete(proc);
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const force = setTimeout(() => child.kill("SIGKILL"), 15_000);
        child.once("exit", () => {
          clearTimeout(force);
          resolve();
        });
        child.kill(signal);
      }),
  };
  procs.add(proc);
  const deadline = Date.now() + 90_000;
  while (!(await portOpen(port))) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}:\n${out}`);
    if (Date.now() > deadline) throw new Error(`${name} did not listen on ${port} within 90 s:\n${out}`);
    await sleep(50);
  }
  proc.readyAt = performance.now();
  return proc;
}

/** CPU seconds (user + system) a process has used so far. */
export const cpuSeconds = (pid: number) => cpuMsOf(pid) / 1000;

/**
 * Commits consumer group `groupId` at the current end of each of `topics` that exists, before
 * any member joins: the delivery processes of every phase (one group, `bench-events-<run>`)
 * would otherwise start from the beginning (a new group's default) and read every event earlier
 * runs left on a long-lived broker, a catch-up that grows with each run, weighs on the drain
 * and shows as the idle phase's CPU, and measures nothing.
 */
export function startGroupAtEnd(groupId: string, topics: string[]): Promise<void> {
  return withKafkaAdmin("bench-events-offsets", async (admin) => {
    const existing = new Set(await admin.listTopics());
    for (const topic of topics.filter((t) => existing.has(t))) {
      const ends = await admin.fetchTopicOffsets(topic);
      await admin.setOffsets({
        groupId,
        topic,
        partitions: ends.map((e) => ({ partition: e.partition, offset: e.high })),
      });
    }
  });
}

/** Runs `fn` with a connected kafkajs admin client of the bench's broker, disconnected after. */
export async function withKafkaAdmin<T>(clientId: string, fn: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = new Kafka({ clientId, brokers: KAFKA_BROKERS.split(","), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.disconnect();
  }
}
