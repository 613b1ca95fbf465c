// What the roll bench watches besides its load: the webhooks arriving at its receiver, and the
// CPU of every instance of every process (old, new and in between) while a roll runs.
import { existsSync, readFileSync } from "node:fs";
import http from "node:http";
import { cpuMs, pidsNamed } from "../bench-support.js";

/**
 * A receiver of deal.created webhooks on `path` (one per run: a subscription an earlier run left
 * behind posts elsewhere): deliveries per event id, and the deal names seen.
 */
export function webhookReceiver(path: string) {
  const byEvent = new Map<string, number>();
  const names = new Set<string>();
  const server = http.createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      res.writeHead(204).end();
      if (req.url !== path) return;
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
          id?: string;
          data?: { deal?: { name?: string } };
        };
        if (body.id) byEvent.set(body.id, (byEvent.get(body.id) ?? 0) + 1);
        if (body.data?.deal?.name) names.add(body.data.deal.name);
      } catch {
        // not a webhook of ours
      }
    });
  });
  return {
    server,
    names,
    /** Deliveries beyond the first of one event (at least once allows them). */
    duplicates: () => [...byEvent.values()].reduce((n, c) => n + c - 1, 0),
    deliveries: () => [...byEvent.values()].reduce((n, c) => n + c, 0),
  };
}

/**
 * CPU ms per process name over a phase, summed over every instance that ran during it: the pid
 * files of stack.sh (`<name>.child`, and `<name>.next.child` while a new instance starts) are
 * read every 250 ms. An instance that started during the phase counts from zero; one that exited
 * counts up to its last sample (up to 250 ms of its drain may be missed).
 */
export function cpuWatch(runDir: string, names: string[]) {
  const seen = new Map<number, { name: string; first: number; last: number }>();
  const shared = new Map<string, { first: number; last: number }>();
  const sharedNow = (comm: string) => pidsNamed(comm).reduce((sum, pid) => sum + (cpuMs(pid) ?? 0), 0);
  const own = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const sample = (initial: boolean) => {
    for (const name of names) {
      for (const file of [`${runDir}/${name}.child`, `${runDir}/${name}.next.child`]) {
        if (!existsSync(file)) continue;
        const pid = Number(readFileSync(file, "utf8").trim());
        const ms = cpuMs(pid);
        if (ms === undefined) continue;
        const entry = seen.get(pid);
        if (entry) entry.last = ms;
        else seen.set(pid, { name, first: initial ? ms : 0, last: ms });
      }
    }
    for (const [label, comm] of [
      ["postgres", "postgres"],
      ["kafka", "java"],
      ["redis", "redis-server"],
    ] as const) {
      const now = sharedNow(comm);
      const entry = shared.get(label);
      if (entry) entry.last = now;
      else shared.set(label, { first: now, last: now });
    }
    const bench = shared.get("bench (load + receiver)");
    if (bench) bench.last = own();
    else shared.set("bench (load + receiver)", { first: own(), last: own() });
  };
  sample(true);
  const timer = setInterval(() => sample(false), 250);
  return {
    stop(): Map<string, number> {
      clearInterval(timer);
      sample(false);
      const out = new Map<string, number>();
      for (const { name, first, last } of seen.values()) out.set(name, (out.get(name) ?? 0) + last - first);
      for (const [label, { first, last }] of shared) out.set(label, Math.max(0, last - first));
      return out;
    },
  };
}
