// The distributed bench's measurements, one row each: a closed loop (autocannon, or calls to
// identity straight over Connect) and an open loop at an even rate, with the CPU per request
// of every process sampled around it.
import http from "node:http";
import { createHistogram, type RecordableHistogram } from "node:perf_hooks";
import autocannon from "autocannon";
import { type OpenLoopSecond, perSecondSampler } from "./seconds.js";
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

/** An open loop's row: its tail, how far the generator itself fell behind, and each second's. */
export type OpenLoopRow = Row & {
  /** The target's CPU column ("gateway", "floor"), which `seconds` name it by. */
  column?: string;
  max: number;
  late: number;
  worstSecond: OpenLoopSecond & { at: number };
  seconds: OpenLoopSecond[];
};

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
