// What the bench suites (scripts/bench-*.ts) share: their argument parsing, the CPU and the
// pid files of the processes they measure, percentiles, the load average, and loading
// generated email events into an analytics database.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import net from "node:net";
import { type ParseArgsConfig, parseArgs } from "node:util";
import { type EmailEvent, emailEventOf, ingestEvents } from "@platform/analytics/server";
import type { Db } from "@platform/kit/db";
import { type GenerateOptions, generateEmailEvents } from "../cli/src/generate.js";

/**
 * The suite's options besides `--suite` (which scripts/bench.ts passes on) and `--help`, which
 * prints `usage` and exits. An unknown or malformed flag is a usage error, not a stack trace.
 */
export function suiteArgs<const O extends NonNullable<ParseArgsConfig["options"]>>(options: O, usage: string) {
  type Options = O & { suite: { type: "string" }; help: { type: "boolean"; short: "h" } };
  let values: ReturnType<typeof parseArgs<{ options: Options }>>["values"];
  try {
    ({ values } = parseArgs<{ options: Options }>({
      options: { ...options, suite: { type: "string" }, help: { type: "boolean", short: "h" } },
    }));
  } catch (error) {
    return usageError((error as Error).message);
  }
  if ((values as { help?: boolean }).help) {
    console.log(usage);
    process.exit(0);
  }
  return values;
}

/** A bad command line: one line on stderr and exit status 2, before anything starts. */
export function usageError(message: string): never {
  console.error(`bench: ${message} (--help lists the options)`);
  process.exit(2);
}

/** A flag's whole number of at least `least`, or a usage error naming the flag. */
export function wholeNumber(flag: string, value: string | number, least = 1): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < least)
    usageError(`--${flag} takes whole numbers of at least ${least}, not '${value}'`);
  return n;
}

/** String options (`--name value`) with these defaults, as `suiteArgs` takes them. */
export function stringFlags<const D extends Record<string, string>>(defaults: D) {
  return Object.fromEntries(
    Object.entries(defaults).map(([name, value]) => [name, { type: "string", default: value }]),
  ) as {
    [K in keyof D]: { type: "string"; default: string };
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The p-th percentile of ascending `sorted` (nearest rank); NaN when empty. */
export function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/** The machine's 1, 5 and 15 minute load averages, for the report ("?" where /proc has none). */
export function loadAverage(): string {
  try {
    return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  } catch {
    return "?";
  }
}

let tickMs: number | undefined;
/** Length of a clock tick, the unit of /proc/<pid>/stat's times. */
export function clockTickMs(): number {
  tickMs ??= 1000 / (Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100);
  return tickMs;
}

/** CPU time (utime + stime) a process has used so far in ms, from /proc/<pid>/stat; undefined once it is gone. */
export function cpuMs(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // The command name may hold spaces; fields count from after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * clockTickMs();
}

/**
 * What a scrape of kit's /metrics says of a process's runtime: its GC pauses so far in seconds
 * (`v8js_gc_duration_sum`, every kind) and the longest event-loop delay since the previous
 * scrape (`nodejs_eventloop_delay_max`), each undefined when it exports none; undefined when
 * the process does not answer.
 */
export interface RuntimeScrape {
  gcSeconds?: number;
  loopDelayMaxSeconds?: number;
}

export async function scrapeRuntime(url: string): Promise<RuntimeScrape | undefined> {
  let text: string;
  try {
    text = await (await fetch(url)).text();
  } catch {
    return undefined;
  }
  const scrape: RuntimeScrape = {};
  const value = (line: string) => Number(line.slice(line.lastIndexOf(" ") + 1));
  for (const line of text.split("\n")) {
    if (line.startsWith("v8js_gc_duration_sum")) scrape.gcSeconds = (scrape.gcSeconds ?? 0) + value(line);
    else if (line.startsWith("nodejs_eventloop_delay_max")) scrape.loopDelayMaxSeconds = value(line);
  }
  return scrape;
}

/** CPU time of a process that must still run, in ms. */
export function cpuMsOf(pid: number): number {
  const ms = cpuMs(pid);
  if (ms === undefined) throw new Error(`process ${pid} is gone`);
  return ms;
}

/**
 * The live pid in `<run dir>/<name>.<kind>` that scripts/stack.sh writes: `pid` is its
 * supervisor, `child` the process it runs (whose CPU is the service's). Undefined when the
 * file is missing or the process gone.
 */
export function stackPid(runDir: string, name: string, kind: "pid" | "child" = "child"): number | undefined {
  const file = `${runDir}/${name}.${kind}`;
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, "utf8").trim());
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

/** Whether something accepts connections on 127.0.0.1:`port` (or on the host and port of a URL). */
export function portOpen(target: number | string): Promise<boolean> {
  const { hostname, port } = typeof target === "number" ? { hostname: "127.0.0.1", port: target } : new URL(target);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

export interface EmailLoad {
  orgId: string;
  /** Exactly this many events (the generator's mix gives about 2.3 per email). */
  events: number;
  senders: GenerateOptions["senders"];
  now: Date;
  /** Events per transaction. */
  batch: number;
  /** Receives the recipient count of each generated blast (for its description). */
  blastRecipients?: number[];
}

/**
 * Generates `events` email events of the last 30 days for one org and ingests them through
 * the ingestion function, one transaction per batch (raw events and every rollup); reports
 * progress on stderr. Returns the options used (to describe the blasts), the events loaded and
 * the events per second.
 */
export async function loadEmailEvents(
  db: Db,
  load: EmailLoad,
): Promise<{ options: GenerateOptions; loaded: number; rate: number }> {
  const options: GenerateOptions = {
    orgId: load.orgId,
    emails: Math.ceil(load.events / 2),
    days: 30,
    blasts: 20,
    seed: "bench",
    now: load.now,
    senders: load.senders,
    maxEvents: load.events,
  };
  const started = performance.now();
  let loaded = 0;
  let batch: EmailEvent[] = [];
  const flush = async () => {
    await db.tx((q) => ingestEvents(q, batch));
    loaded += batch.length;
    batch = [];
    const seconds = (performance.now() - started) / 1000;
    process.stderr.write(
      `\r${load.orgId}: ${loaded.toLocaleString("en-US")} events (${(loaded / seconds).toFixed(0)}/s)`,
    );
  };
  for (const e of generateEmailEvents(options, load.blastRecipients ?? [])) {
    batch.push(emailEventOf(e));
    if (batch.length >= load.batch) await flush();
  }
  if (batch.length > 0) await flush();
  process.stderr.write("\n");
  return { options, loaded, rate: loaded / ((performance.now() - started) / 1000) };
}

/** Pids of every process whose command name is `comm` (e.g. every Postgres backend), from /proc. */
export function pidsNamed(comm: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() === comm) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** The machine's busy and total CPU time so far (all cores), in clock ticks, from /proc/stat. */
export function machineTicks(): { busy: number; total: number } {
  const cpu = readFileSync("/proc/stat", "utf8").split("\n")[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
  const total = cpu.reduce((a, b) => a + b, 0);
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
  return { busy: total - idle, total };
}
