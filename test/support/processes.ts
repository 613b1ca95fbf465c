import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createConnection } from "node:net";
import pg from "pg";

/** The machine's infrastructure the cross-process tests run against (overridable for a stack of one's own). */
export const PG_URL = process.env.PG_URL ?? "postgres://postgres@127.0.0.1:5432";
export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
export const KAFKA_BROKERS = process.env.KAFKA_BROKERS ?? "127.0.0.1:19092";

/**
 * The node flags the platform's processes run with on this node (scripts/node-flags.sh), as the
 * images and `npm run stack` give them: the processes these tests start run as deployed.
 */
export const NODE_FLAGS = execFileSync("bash", ["scripts/node-flags.sh", process.execPath], {
  cwd: new URL("../..", import.meta.url),
  encoding: "utf8",
})
  .split(/\s+/)
  .filter((flag) => flag !== "");

/** A run id: names what one test run creates (databases, seeds, consumer groups, key prefixes). */
export const runId = () => randomBytes(4).toString("hex");

export interface Started {
  name: string;
  proc: ChildProcess;
  output: () => string;
  stop: () => Promise<void>;
}

/**
 * Starts a service entry point as its own process (`node --import tsx <entry>`) and
 * waits until it listens. Only this process is ever stopped, by its pid.
 */
export async function startProcess(
  name: string,
  entry: string,
  env: Record<string, string>,
  port: number,
  /** How long it may take to listen (several processes starting at once on a loaded machine take longer). */
  timeoutMs = 60_000,
  /** The checkout it runs from (`entry` is relative to it; its own tsx and packages): this one when unset. */
  root?: string,
): Promise<Started> {
  const proc = spawn(process.execPath, [...NODE_FLAGS, "--import", "tsx", entry], {
    ...(root ? { cwd: root } : {}),
    env: { ...process.env, LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  proc.stdout?.on("data", (d) => {
    log += d;
  });
  proc.stderr?.on("data", (d) => {
    log += d;
  });
  const started: Started = {
    name,
    proc,
    output: () => log,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
        const force = setTimeout(() => proc.kill("SIGKILL"), 10_000);
        proc.once("exit", () => {
          clearTimeout(force);
          resolve();
        });
        proc.kill("SIGTERM");
      }),
  };
  const deadline = Date.now() + timeoutMs;
  while (!(await portOpen(port))) {
    if (proc.exitCode !== null) throw new Error(`${name} exited with ${proc.exitCode}:\n${log}`);
    if (Date.now() > deadline) {
      await started.stop();
      throw new Error(`${name} did not listen on ${port} within ${timeoutMs / 1000} s:\n${log}`);
    }
    await sleep(200);
  }
  return started;
}

export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A free port range per test file, away from the runtimes' defaults. TEST_PORT_BASE moves
 * the 4,000-port window (engineers sharing a machine each have their own).
 */
export function basePort(offset: number): number {
  const base = Number(process.env.TEST_PORT_BASE) || 20_000;
  const window = Number(process.env.TEST_PORT_WINDOW) || 4_000;
  return base + offset + Math.floor(Math.random() * (window / 10)) * 10;
}

/**
 * How long a test's beforeAll may take to start its stack: each process may take up to
 * `StackOptions.timeoutMs` when the machine is loaded (several stacks and suites at once).
 */
export const STACK_START_TIMEOUT_MS = 400_000;
/** How long one process of a stack may take to listen, unless the stack says otherwise. */
const STACK_PROCESS_TIMEOUT_MS = 120_000;

/** One process of a stack. */
export interface StackProcess {
  name: string;
  /** Its entry point, from the repository root. */
  entry: string;
  /** The port it is ready once it listens on. */
  port: number;
  /** A database of its own by short name (see `database`); DATABASE_URL points at it. */
  database?: string;
  /** Its own settings, after the stack's. */
  env?: Record<string, string>;
  /** The checkout it runs from (another build, e.g. the previous release's); the repository root when unset. */
  root?: string;
}

export interface StackOptions {
  /** Names the test's databases: `<name>_<database>_<run>`. */
  name: string;
  run: string;
  processes: StackProcess[];
  /** Settings every process of the stack gets. */
  env?: Record<string, string>;
  /** Starts every process at once instead of one after the other. */
  parallel?: boolean;
  /** How long each process may take to listen (120 s when unset). */
  timeoutMs?: number;
}

export interface Stack {
  /** The processes started, in order. */
  readonly processes: Started[];
  /** A running process by name. */
  get(name: string): Started;
  /** The full name of a database of the stack. */
  database(short: string): string;
  databaseUrl(short: string): string;
  /**
   * Starts one process of the stack again (after it was stopped); `other` runs it from another
   * checkout (`root`) with settings added to its own.
   */
  restart(name: string, other?: { root: string; env?: Record<string, string> }): Promise<Started>;
  /** Stops every process, last started first, and drops the stack's databases. */
  stop(): Promise<void>;
}

/**
 * Starts the processes of a cross-process test, each with the stack's settings and its own,
 * each service on a database named for this test and run (created by the service itself on
 * first start). If one fails to start, the others are stopped and the databases dropped
 * before the error is thrown, so a failed start leaves nothing behind.
 */
export async function startStack(opts: StackOptions): Promise<Stack> {
  const database = (short: string) => `${opts.name}_${short}_${opts.run}`;
  const databaseUrl = (short: string) => `${PG_URL}/${database(short)}`;
  const byName = new Map<string, Started>();
  const started: Started[] = [];
  const spec = (name: string) => {
    const found = opts.processes.find((p) => p.name === name);
    if (!found) throw new Error(`no process ${name} in the stack`);
    return found;
  };
  const launch = async (p: StackProcess) => {
    const env = {
      ...opts.env,
      ...(p.database ? { DATABASE_URL: databaseUrl(p.database) } : {}),
      ...p.env,
    };
    const proc = await startProcess(p.name, p.entry, env, p.port, opts.timeoutMs ?? STACK_PROCESS_TIMEOUT_MS, p.root);
    started.push(proc);
    byName.set(p.name, proc);
    return proc;
  };
  const stack: Stack = {
    processes: started,
    get(name) {
      const proc = byName.get(name);
      if (!proc) throw new Error(`${name} is not running`);
      return proc;
    },
    database,
    databaseUrl,
    restart: (name, other) => {
      const p = spec(name);
      return launch(other ? { ...p, root: other.root, env: { ...p.env, ...other.env } } : p);
    },
    async stop() {
      for (const p of [...started].reverse()) {
        // A process left frozen (SIGSTOP) by a failed assertion must be able to take its SIGTERM.
        p.proc.kill("SIGCONT");
        await p.stop();
      }
      const databases = [...new Set(opts.processes.flatMap((p) => (p.database ? [database(p.database)] : [])))];
      const client = new pg.Client({ connectionString: `${PG_URL}/postgres` });
      await client.connect();
      try {
        for (const db of databases) await client.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
  try {
    if (opts.parallel) {
      const settled = await Promise.allSettled(opts.processes.map(launch));
      const failed = settled.find((r) => r.status === "rejected");
      if (failed) throw (failed as PromiseRejectedResult).reason;
    } else {
      for (const p of opts.processes) await launch(p);
    }
  } catch (err) {
    await stack.stop();
    throw err;
  }
  return stack;
}
