/**
 * npm run bench -- --suite compression — what brotli and gzip cost and save on the embedded
 * gateway: the same requests with no Accept-Encoding, with `br` and with `gzip`, side by
 * side in one run. Targets: a 100-item account list, and availability of a schedule with 20
 * hosts over its whole window (the megabyte answer). Prints req/s, p50, p99 and the bytes of
 * one answer on the wire.
 *
 *   npm run bench -- --suite compression [--duration 5] [--connections 2]
 */
import { parseArgs } from "node:util";
import { systemClock } from "@platform/kit/clock";
import { seedBenchSchedule } from "@platform/scheduling/server";
import autocannon from "autocannon";
import { benchPlatform } from "./bench-embedded.js";

const { values } = parseArgs({
  args: process.argv.slice(2).filter((a, i, all) => a !== "--suite" && all[i - 1] !== "--suite"),
  options: {
    duration: { type: "string", default: "5" },
    connections: { type: "string", default: "2" },
  },
});
const duration = Number(values.duration);
const connections = Number(values.connections);

const { platform, acme, issueTokens } = await benchPlatform();
const keys = await issueTokens(100, ["accounts:read", "smart-scheduling:read"]);
let next = 0;
const url = `${await platform.app.listen({ port: 0, host: "127.0.0.1" })}/api/v1alpha1`;
const bench = await seedBenchSchedule(platform.dbs.scheduling, {
  orgId: acme.orgId,
  hostCount: 20,
  clock: systemClock,
});

interface Target {
  name: string;
  path: string;
  method: "GET" | "POST";
  body?: string;
}
const targets: Target[] = [
  { name: "GET /accounts?limit=100", path: "/accounts?limit=100", method: "GET" },
  {
    name: "availability, 20 hosts, whole window",
    path: `/smart-schedules/${bench.scheduleId}/availability`,
    method: "POST",
    body: JSON.stringify({ formValues: bench.formValues }),
  },
];

function headers(target: Target, encoding: string | undefined): Record<string, string> {
  return {
    "X-Platform-Api-Key": keys[next++ % keys.length]!,
    ...(target.body ? { "Content-Type": "application/json" } : {}),
    ...(encoding ? { "Accept-Encoding": encoding } : {}),
  };
}

async function wireBytes(target: Target, encoding: string | undefined): Promise<number> {
  // fetch would decode; a raw request keeps the bytes as sent.
  const { request } = await import("node:http");
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${target.path}`,
      { method: target.method, headers: headers(target, encoding) },
      (res) => {
        let n = 0;
        res.on("data", (c: Buffer) => {
          n += c.length;
        });
        res.on("end", () =>
          res.statusCode === 200 ? resolve(n) : reject(new Error(`${target.name}: ${res.statusCode}`)),
        );
      },
    );
    req.on("error", reject);
    req.end(target.body);
  });
}

const rows: string[] = [];
for (const target of targets) {
  for (const encoding of [undefined, "br", "gzip"]) {
    const bytes = await wireBytes(target, encoding);
    process.stderr.write(`running ${target.name} (${encoding ?? "identity"}) for ${duration}s…\n`);
    const r = await autocannon({
      url: `${url}${target.path}`,
      method: target.method,
      connections,
      duration,
      // A whole-window availability answer takes seconds on a busy machine; not an error.
      timeout: 60,
      requests: [
        {
          ...(target.body ? { body: target.body } : {}),
          setupRequest: (req) => ({ ...req, headers: { ...req.headers, ...headers(target, encoding) } }),
        },
      ],
    });
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${target.name}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    rows.push(
      `| ${target.name} | ${encoding ?? "identity"} | ${bytes} | ${r.requests.average.toFixed(1)} | ${r.latency.p50} | ${r.latency.p99} | ${r.requests.total} |`,
    );
  }
}
console.log("\n| target | encoding | bytes on the wire | req/s | p50 ms | p99 ms | requests |");
console.log("|---|---|---|---|---|---|---|");
for (const row of rows) console.log(row);
console.log(`\nnode ${process.version}, ${connections} connections, ${duration}s per target\n`);
await platform.close();
