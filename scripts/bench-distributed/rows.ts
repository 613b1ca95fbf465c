// The distributed bench's measurements, one row each: a closed loop (autocannon, or calls to
// identity straight over Connect) and an open loop at an even rate, with the CPU per request
// of every process sampled around it.
import { readFileSync } from "node:fs";
import http from "node:http";
import { createHistogram, monitorEventLoopDelay, type RecordableHistogram } from "node:perf_hooks";
import autocannon from "autocannon";
import { clockTickMs, cpuMs } from "../bench-support.js";
import { API, cpuPerRequest, log, sampleCpu, sampledPids } from "./stack.js";

export interface Row {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  errors: number;
  cpu: Record<string, number>;
}

export async function autocannonRow(
  name: string,
  url: string,
  conns: number,
  seconds: number,
  keyOf: () => string,
  opts: { method?: "GET" | "POST"; body?: (n: number) => string } = {},
): Promise<Row> {
  log(`${name}: ${seconds}s at ${conns} connections…`);
  const before = await sampleCpu();
  let n = 0;
  const r = await autocannon({
    url,
    connections: conns,
    duration: seconds,
    requests: [
      {
        method: opts.method ?? "GET",
        setupRequest: (req) => {
          n++;
          const headers: Record<string, string | string[] | undefined> = {
            ...req.headers,
            "X-Platform-Api-Key": keyOf(),
          };
          if (!opts.body) return { ...req, headers };
          headers["Content-Type"] = "application/json";
          headers["Idempotency-Key"] = `bench-${process.pid}-${Date.now()}-${n}`;
          return { ...req, headers, body: opts.body(n) };
        },
      },
    ],
  });
  const after = await sampleCpu();
  return {
    name,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests.total,
    errors: r.non2xx + r.errors + r.timeouts,
    cpu: cpuPerRequest(before, after, r.requests.total),
  };
}

/** `call` (identity's GetOrganization, straight): `conns` calls in flight at all times over one HTTP/2 session. */
export async function directRow(call: () => Promise<unknown>, conns: number, seconds: number): Promise<Row> {
  const name = `identity GetOrganization direct (Connect)`;
  log(`${name}: ${seconds}s at ${conns} concurrent calls…`);
  const histogram = createHistogram();
  let requests = 0;
  let errors = 0;
  const before = await sampleCpu();
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: conns }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        try {
          await call();
          histogram.record(Math.max(1, Math.round((performance.now() - t0) * 1000)));
          requests++;
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const after = await sampleCpu();
  return {
    name,
    rps: requests / elapsed,
    p50: histogram.percentile(50) / 1000,
    p99: histogram.percentile(99) / 1000,
    requests,
    errors,
    cpu: cpuPerRequest(before, after, requests),
  };
}

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

/** An open loop's row: its tail, how far the generator itself fell behind, and each second's. */
export type OpenLoopRow = Row & {
  /** The target's CPU column ("gateway", "floor"), which `seconds` name it by. */
  column?: string;
  max: number;
  late: number;
  worstSecond: OpenLoopSecond & { at: number };
  seconds: OpenLoopSecond[];
};

/** The machine's CPU time so far, from /proc/stat's first line, in ms: idle, steal and all. */
function machineCpu(): { idle: number; steal: number; total: number } {
  const fields = (readFileSync("/proc/stat", "utf8").split("\n", 1)[0] ?? "").trim().split(/\s+/).slice(1).map(Number);
  const tick = clockTickMs();
  // user nice system idle iowait irq softirq steal (guest time is counted in user already).
  const [, , , idle = 0, iowait = 0, , , steal = 0] = fields;
  const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
  return { idle: (idle + iowait) * tick, steal: steal * tick, total: total * tick };
}

/** Each process's CPU ms so far, Postgres's backends summed, and the bench's own. */
function processCpu(pids: Array<[string, number]>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [key, pid] of pids) {
    const name = key.startsWith("postgres:") ? "postgres" : key;
    out.set(name, (out.get(name) ?? 0) + (cpuMs(pid) ?? 0));
  }
  const own = process.cpuUsage();
  out.set("load generator", (own.user + own.system) / 1000);
  return out;
}

/** How often the generator's own loop-delay monitor turns, ms. */
const LOOP_RESOLUTION_MS = 5;

/** What a scrape of kit's /metrics says of GC (`v8js_gc_duration`) and the loop's delay. */
interface RuntimeScrape {
  gcSeconds: number;
  loopDelayMaxSeconds: number;
}

async function scrapeRuntime(url: string): Promise<RuntimeScrape | undefined> {
  try {
    const text = await (await fetch(url)).text();
    let gcSeconds = 0;
    let loopDelayMaxSeconds = 0;
    for (const line of text.split("\n")) {
      if (line.startsWith("v8js_gc_duration_sum")) gcSeconds += Number(line.slice(line.lastIndexOf(" ") + 1));
      else if (line.startsWith("nodejs_eventloop_delay_max"))
        loopDelayMaxSeconds = Number(line.slice(line.lastIndexOf(" ") + 1));
    }
    return { gcSeconds, loopDelayMaxSeconds };
  } catch {
    return undefined;
  }
}

/**
 * Samples, once a second of the row, what `OpenLoopSecond` reports. It runs on the generator's
 * own loop; reading the few /proc files costs it well under a millisecond a second. It also
 * scrapes the /metrics of `metrics` (name → URL) each second, as a 1 s Prometheus would (each
 * scrape resets a process's loop-delay maximum, so each second has its own).
 */
function perSecondSampler(pids: Array<[string, number]>, metrics: Record<string, string>) {
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
              gcMs: (to.gcSeconds - from.gcSeconds) * 1000,
              loopDelayMaxMs: to.loopDelayMaxSeconds * 1000,
            };
          }
        }
        return { ...second, runtime };
      });
    },
  };
}

/**
 * Sends GET /organizations/me at an even `rate` for `seconds`: request i is due at
 * start + i/rate and its latency runs from that due time to the end of its response, however
 * late the generator or the server made it. Connections come from a keep-alive pool that
 * grows as needed, so a slow response never holds back the next send.
 */
export async function openLoopRow(
  target: { name: string; url: string; column?: string },
  rate: number,
  seconds: number,
  keyOf: () => string,
  /** Processes whose GC and loop delay each second shows (name → /metrics URL). */
  metrics: Record<string, string> = {},
): Promise<OpenLoopRow> {
  const name = `${target.name}, ${rate} req/s`;
  log(`open loop ${name}: ${seconds}s…`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });
  const { hostname, port } = new URL(target.url);
  const histogram: RecordableHistogram = createHistogram();
  // One histogram per second of scheduled send time: a stall shows as one bad second.
  const perSecond: RecordableHistogram[] = Array.from({ length: Math.ceil(seconds) }, () => createHistogram());
  const total = Math.round(rate * seconds);
  const intervalMs = 1000 / rate;
  let sent = 0;
  let done = 0;
  let errors = 0;
  let late = 0;
  const before = await sampleCpu();
  const sampler = perSecondSampler(await sampledPids(), metrics);
  const start = performance.now();
  await new Promise<void>((resolve) => {
    const send = (due: number) => {
      const req = http.request(
        {
          agent,
          host: hostname,
          port,
          path: `${API}/organizations/me`,
          headers: { "X-Platform-Api-Key": keyOf() },
        },
        (res) => {
          res.resume();
          res.once("end", () => {
            if (res.statusCode !== 200) errors++;
            finish(due);
          });
        },
      );
      req.once("error", () => {
        errors++;
        finish(due);
      });
      req.end();
    };
    const finish = (due: number) => {
      const micros = Math.max(1, Math.round((performance.now() - due) * 1000));
      histogram.record(micros);
      perSecond[Math.min(perSecond.length - 1, Math.floor((due - start) / 1000))]?.record(micros);
      if (++done === total) resolve();
    };
    const tick = () => {
      const now = performance.now();
      while (sent < total) {
        const due = start + sent * intervalMs;
        if (due > now) break;
        // More than a millisecond behind its slot: the generator itself fell behind (CPU).
        if (now - due > 1) late++;
        sent++;
        send(due);
      }
      if (sent < total) setTimeout(tick, Math.max(0, start + sent * intervalMs - performance.now()));
    };
    tick();
  });
  const sampled = await sampler.stop();
  const after = await sampleCpu();
  agent.destroy();
  // The sampler's seconds run from its start, the histograms' from the first due time: the
  // same seconds, give or take the sampler's timer.
  const bySecond = perSecond.map((h, at) => ({
    p99: h.count ? h.percentile(99) / 1000 : 0,
    cpuMs: {},
    runtime: {},
    generatorDelayMs: 0,
    stealMs: 0,
    idlePct: 0,
    ...sampled[at],
  }));
  return {
    name,
    column: target.column,
    rps: total / ((performance.now() - start) / 1000),
    p50: histogram.percentile(50) / 1000,
    p99: histogram.percentile(99) / 1000,
    max: histogram.max / 1000,
    requests: total,
    errors,
    late,
    worstSecond: bySecond
      .map((second, at) => ({ ...second, at }))
      .reduce((worst, second) => (second.p99 > worst.p99 ? second : worst)),
    seconds: bySecond,
    cpu: cpuPerRequest(before, after, total),
  };
}
