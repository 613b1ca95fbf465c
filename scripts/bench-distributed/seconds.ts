// Each second of an open-loop row (rows.ts): what could have held that second's requests up,
// sampled beside them once a second.
import { readFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { clockTickMs, type RuntimeScrape, scrapeRuntime } from "../bench-support.js";
import { cpuOf } from "./stack.js";

/**
 * One second of an open loop, by scheduled send time: its p99 and who could have held it up.
 * `cpuMs` is each sampled process's CPU in that second (the target's under its column's name,
 * the bench's own as "load generator"), `generatorDelayMs` the longest the bench's event loop
 * (the load generator's) was held up, `stealMs` the time the hypervisor gave this VM's vCPUs
 * to someone else and `idlePct` how idle the machine's cores were (both from /proc/stat). A bad
 * second with a long generator delay is the generator's; with steal, or no idle left, the
 * machine's; with a process busier than in the other seconds, likely that process's.
 */
export interface OpenLoopSecond {
  p99: number;
  cpuMs: Record<string, number>;
  generatorDelayMs: number;
  stealMs: number;
  idlePct: number;
  /** From the /metrics of the processes given, scraped once a second: GC and loop delay, by name. */
  runtime: Record<string, { gcMs: number; loopDelayMaxMs: number }>;
}

/** The machine's CPU time so far, from /proc/stat's first line, in ms: idle, steal and all. */
function machineCpu(): { idle: number; steal: number; total: number } {
  const fields = (readFileSync("/proc/stat", "utf8").split("\n", 1)[0] ?? "").trim().split(/\s+/).slice(1).map(Number);
  const tick = clockTickMs();
  // user nice system idle iowait irq softirq steal (guest time is counted in user already).
  const [, , , idle = 0, iowait = 0, , , steal = 0] = fields;
  const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
  return { idle: (idle + iowait) * tick, steal: steal * tick, total: total * tick };
}

/** Each process's CPU ms so far (stack.ts's cpuOf), Postgres's backends summed under one name. */
function processCpu(pids: Array<[string, number]>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [key, ms] of cpuOf(pids)) {
    const name = key.startsWith("postgres:") ? "postgres" : key;
    out.set(name, (out.get(name) ?? 0) + ms);
  }
  return out;
}

/** How often the generator's own loop-delay monitor turns, ms. */
const LOOP_RESOLUTION_MS = 5;

/**
 * Samples, once a second of the row, what `OpenLoopSecond` reports. It runs on the generator's
 * own loop; reading the few /proc files costs it well under a millisecond a second. It also
 * scrapes the /metrics of `metrics` (name → URL) each second, as a 1 s Prometheus would (each
 * scrape resets a process's loop-delay maximum, so each second has its own).
 */
export function perSecondSampler(pids: Array<[string, number]>, metrics: Record<string, string>) {
  const delay = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  delay.enable();
  const samples: Omit<OpenLoopSecond, "p99">[] = [];
  const scrapes: Promise<Array<[string, RuntimeScrape | undefined]>>[] = [];
  const scrape = () => {
    scrapes.push(
      Promise.all(
        Object.entries(metrics).map(
          async ([name, url]) => [name, await scrapeRuntime(url)] as [string, RuntimeScrape | undefined],
        ),
      ),
    );
  };
  let machine = machineCpu();
  let cpu = processCpu(pids);
  scrape();
  const take = () => {
    const nextMachine = machineCpu();
    const nextCpu = processCpu(pids);
    const total = nextMachine.total - machine.total;
    samples.push({
      cpuMs: Object.fromEntries([...nextCpu].map(([name, ms]) => [name, ms - (cpu.get(name) ?? ms)])),
      // The monitor's samples are the time between its turns: the delay is what exceeds that.
      generatorDelayMs: delay.count > 0 ? Math.max(0, delay.max / 1e6 - LOOP_RESOLUTION_MS) : 0,
      stealMs: nextMachine.steal - machine.steal,
      idlePct: total > 0 ? (100 * (nextMachine.idle - machine.idle)) / total : 0,
      runtime: {},
    });
    scrape();
    delay.reset();
    machine = nextMachine;
    cpu = nextCpu;
  };
  const timer = setInterval(take, 1000);
  return {
    async stop(): Promise<Omit<OpenLoopSecond, "p99">[]> {
      clearInterval(timer);
      take();
      delay.disable();
      // Scrape i+1 closes second i: its GC sum less scrape i's, and the loop's maximum since it.
      const scraped = (await Promise.all(scrapes)).map((s) => new Map(s));
      return samples.map((second, i) => {
        const runtime: OpenLoopSecond["runtime"] = {};
        for (const name of Object.keys(metrics)) {
          const [from, to] = [scraped[i]?.get(name), scraped[i + 1]?.get(name)];
          if (from && to) {
            runtime[name] = {
              gcMs: ((to.gcSeconds ?? 0) - (from.gcSeconds ?? 0)) * 1000,
              loopDelayMaxMs: (to.loopDelayMaxSeconds ?? 0) * 1000,
            };
          }
        }
        return { ...second, runtime };
      });
    },
  };
}
