// The roll bench's load: an even rate of mixed reads and keyed writes through the gateway (open
// loop: request i is due at start + i/rate and its latency runs from that due time), until stopped.
import { randomUUID } from "node:crypto";
import http from "node:http";
import { createHistogram, type RecordableHistogram } from "node:perf_hooks";

export interface Fixtures {
  gateway: string;
  keys: string[];
  accountId: string;
  stage: string;
  /** A label the deals of this run carry in their name, so their webhooks can be told apart. */
  label: string;
}

/** One request of the mix; `write` ones create a deal named `name` (its webhook is expected). */
interface Planned {
  method: "GET" | "POST";
  path: string;
  body?: string;
  name?: string;
}

/** Reads of every service behind the gateway, and one write in five (POST /deals, keyed). */
const READS = [
  "/organizations/me",
  "/deals?limit=5",
  "/accounts?limit=5",
  "/smart-schedules?limit=5",
  "/webhook-subscriptions",
  "/email-blasts?limit=5",
  "/organizations/me",
  "/deals?limit=5",
];

export interface LoadResult {
  sent: number;
  ok: number;
  /** Failed requests, by status or error code. */
  failures: Map<string, number>;
  /** Requests sent again after the server closed the reused keep-alive connection before any answer. */
  retried: number;
  p50: number;
  p99: number;
  max: number;
  worstSecond: { p99: number; at: number };
  /** Names of the deals created (2xx), whose deal.created webhook must arrive. */
  created: string[];
  seconds: number;
}

/**
 * Starts the load; `stop()` stops sending and resolves once every request has its answer.
 * A request is retried once when it went out on a reused keep-alive connection that the server
 * closed before answering (Node's documented pattern: `request.reusedSocket` and ECONNRESET), on a
 * new connection:
 * every request of the mix is safe to send again, reads by nature, writes by their Idempotency-Key.
 */
export function startLoad(f: Fixtures, rate: number): { stop(): Promise<LoadResult> } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });
  // A retry goes on a connection of its own: the pool's other idle ones may be closing too.
  const fresh = new http.Agent({ keepAlive: false });
  const { hostname, port } = new URL(f.gateway);
  const histogram: RecordableHistogram = createHistogram();
  const perSecond: RecordableHistogram[] = [];
  const failures = new Map<string, number>();
  const created: string[] = [];
  const fail = (why: string) => failures.set(why, (failures.get(why) ?? 0) + 1);
  const intervalMs = 1000 / rate;
  let sent = 0;
  let done = 0;
  let ok = 0;
  let retried = 0;
  let stopping = false;
  let allDone: (() => void) | undefined;
  const start = performance.now();

  const plan = (i: number): Planned => {
    if (i % 5 === 4) {
      const name = `${f.label} ${i}`;
      return {
        method: "POST",
        path: "/deals",
        name,
        body: JSON.stringify({ name, accountId: f.accountId, stage: f.stage }),
      };
    }
    return { method: "GET", path: READS[i % READS.length] as string };
  };

  const finish = (due: number) => {
    const micros = Math.max(1, Math.round((performance.now() - due) * 1000));
    histogram.record(micros);
    const second = Math.floor((due - start) / 1000);
    perSecond[second] ??= createHistogram();
    perSecond[second].record(micros);
    done++;
    if (stopping && done === sent) allDone?.();
  };

  const send = (p: Planned, key: string, idempotencyKey: string, due: number, attempt: number) => {
    const req = http.request(
      {
        agent: attempt === 1 ? agent : fresh,
        host: hostname,
        port,
        method: p.method,
        path: `/api/v1alpha1${p.path}`,
        headers: {
          "X-Platform-Api-Key": key,
          ...(p.body === undefined
            ? {}
            : {
                "content-type": "application/json",
                "content-length": Buffer.byteLength(p.body),
                "idempotency-key": idempotencyKey,
              }),
        },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        res.resume();
        res.once("end", () => {
          if (status >= 200 && status < 300) {
            ok++;
            if (p.name) created.push(p.name);
          } else fail(`HTTP ${status} ${p.method} ${p.path.split("?")[0]}`);
          finish(due);
        });
        res.once("error", () => {
          fail(`response aborted ${p.method} ${p.path.split("?")[0]}`);
          finish(due);
        });
      },
    );
    req.once("error", (err: NodeJS.ErrnoException) => {
      if (req.reusedSocket && err.code === "ECONNRESET" && attempt === 1) {
        retried++;
        return send(p, key, idempotencyKey, due, 2);
      }
      fail(
        `${err.code ?? err.message} ${p.method} ${p.path.split("?")[0]}${req.reusedSocket ? " (reused connection)" : ""}`,
      );
      finish(due);
    });
    req.end(p.body);
  };

  let timer: NodeJS.Timeout | undefined;
  let reads = 0;
  let writes = 0;
  const tick = () => {
    const now = performance.now();
    while (!stopping) {
      const due = start + sent * intervalMs;
      if (due > now) break;
      const p = plan(sent);
      // Writes take the keys in turn (20 writes a minute each), and reads too, on a count of their own.
      const key = f.keys[(p.body === undefined ? reads++ : writes++) % f.keys.length] as string;
      send(p, key, randomUUID(), due, 1);
      sent++;
    }
    if (!stopping) timer = setTimeout(tick, Math.max(0, start + sent * intervalMs - performance.now()));
  };
  tick();

  return {
    async stop() {
      stopping = true;
      if (timer) clearTimeout(timer);
      const seconds = (performance.now() - start) / 1000;
      if (done < sent) await new Promise<void>((r) => (allDone = r));
      agent.destroy();
      fresh.destroy();
      return {
        sent,
        ok,
        failures,
        retried,
        p50: histogram.percentile(50) / 1000,
        p99: histogram.percentile(99) / 1000,
        max: histogram.max / 1000,
        worstSecond: perSecond
          .map((h, at) => ({ p99: h?.count ? h.percentile(99) / 1000 : 0, at }))
          .reduce((worst, s) => (s.p99 > worst.p99 ? s : worst), { p99: 0, at: 0 }),
        created,
        seconds,
      };
    },
  };
}
