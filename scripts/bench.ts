/**
 * npm run bench — GET /organizations/me through the whole embedded gateway (API key,
 * scopes, rate limits, signed Connect call, PGlite) against a bare fastify route returning
 * the same JSON, in the same process and run. Prints req/s, p50, p99 and the ratio.
 *
 * Rate limits stay on: the load is spread over freshly issued tokens so that no token passes
 * the 300 reads/minute of the spec; a 429 fails the run.
 *
 *   npm run bench -- [--duration 10] [--connections 10] [--tokens 600]
 *   npm run bench -- --suite analytics   (buyer signals at 1,000,000 email events)
 *   npm run bench -- --suite distributed (the request path of the distributed runtime)
 *   npm run bench -- --suite availability   (availability against a running stack)
 *   npm run bench -- --suite compression (brotli and gzip against identity, same run)
 *   npm run bench -- --suite events      (webhook delivery, outbox relay, restarts: scripts/bench-events.ts)
 *   npm run bench -- --suite rpc         (one unary Connect call: Connect-ES against kit's lean path)
 *   npm run bench -- --suite ratelimit   (the gateway's rate-limit stores on Redis: every hit checked, or local-first)
 */
import { parseArgs } from "node:util";
import { systemClock } from "@platform/kit/clock";
import { seedBenchSchedule } from "@platform/scheduling/server";
import autocannon from "autocannon";
import Fastify from "fastify";
import { benchPlatform } from "./bench-embedded.js";

// `--suite <name>` runs another benchmark instead: analytics (scripts/bench-analytics.ts),
// distributed (scripts/bench-distributed.ts), availability (scripts/bench-availability.ts),
// compression (scripts/bench-compression.ts), events (scripts/bench-events.ts), rpc
// (scripts/bench-rpc.ts), ratelimit (scripts/bench-ratelimit.ts).
const SUITES: Record<string, () => Promise<unknown>> = {
  analytics: () => import("./bench-analytics.js"),
  distributed: () => import("./bench-distributed.js"),
  availability: () => import("./bench-availability.js"),
  compression: () => import("./bench-compression.js"),
  events: () => import("./bench-events.js"),
  rpc: () => import("./bench-rpc.js"),
  ratelimit: () => import("./bench-ratelimit.js"),
};
const suiteAt = process.argv.indexOf("--suite");
if (suiteAt !== -1) {
  const suite = process.argv[suiteAt + 1] ?? "";
  const run = SUITES[suite];
  if (!run) throw new Error(`unknown --suite '${suite}'; the suites are: ${Object.keys(SUITES).join(", ")}`);
  await run();
  process.exit(process.exitCode ?? 0);
}

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "10" },
    tokens: { type: "string", default: "600" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log("usage: npm run bench -- [--duration SECONDS] [--connections N] [--tokens N]");
  process.exit(0);
}
const duration = Number(values.duration);
const connections = Number(values.connections);
const tokenCount = Number(values.tokens);

const { platform, acme, issueTokens } = await benchPlatform();
process.stderr.write(`issuing ${tokenCount} tokens…\n`);
const keys = await issueTokens(tokenCount, ["organizations:read", "smart-scheduling:read"]);
const key = acme.key;
const gatewayUrl = await platform.app.listen({ port: 0, host: "127.0.0.1" });

const sample = await fetch(`${gatewayUrl}/api/v1alpha1/organizations/me`, { headers: { "X-Platform-Api-Key": key } });
if (sample.status !== 200) throw new Error(`sanity request failed: ${sample.status} ${await sample.text()}`);
const body = await sample.text();

const bare = Fastify({ logger: false });
bare.get("/api/v1alpha1/organizations/me", async (_req, reply) => reply.type("application/json").send(body));
const bareUrl = await bare.listen({ port: 0, host: "127.0.0.1" });

interface Target {
  path: string;
  method?: "GET" | "POST";
  body?: string;
  seconds?: number;
  connections?: number;
}

async function measure(name: string, url: string, target: Target = { path: "/organizations/me" }) {
  const seconds = target.seconds ?? duration;
  const conns = target.connections ?? connections;
  process.stderr.write(`running ${name} for ${seconds}s with ${conns} connections…\n`);
  let next = 0;
  const r = await autocannon({
    url: `${url}/api/v1alpha1${target.path}`,
    connections: conns,
    duration: seconds,
    requests: [
      {
        method: target.method ?? "GET",
        ...(target.body ? { body: target.body } : {}),
        setupRequest: (req) => ({
          ...req,
          headers: {
            ...req.headers,
            "X-Platform-Api-Key": keys[next++ % keys.length] ?? key,
            ...(target.body ? { "Content-Type": "application/json" } : {}),
          },
        }),
      },
    ],
  });
  if (r.non2xx > 0 || r.errors > 0) {
    throw new Error(`${name}: ${r.non2xx} non-2xx, ${r.errors} errors (429s mean more --tokens are needed)`);
  }
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, total: r.requests.total };
}

// Warm-up fills the token cache and lets V8 optimise; its figures are discarded.
await measure("warm-up", gatewayUrl, { path: "/organizations/me", seconds: 3 });
const gateway = await measure("gateway GET /organizations/me", gatewayUrl);
const baseline = await measure("bare fastify route", bareUrl);

// Availability of a schedule with 20 hosts in several zones over its whole booking window:
// routing, slot generation, busy checks and one signed token per slot.
const bench = await seedBenchSchedule(platform.dbs.scheduling, {
  orgId: acme.orgId,
  hostCount: 20,
  clock: systemClock,
});
const availabilityBody = JSON.stringify({ formValues: bench.formValues });
const probe = await fetch(`${gatewayUrl}/api/v1alpha1/smart-schedules/${bench.scheduleId}/availability`, {
  method: "POST",
  headers: { "X-Platform-Api-Key": key, "Content-Type": "application/json" },
  body: availabilityBody,
});
const offered = ((await probe.json()) as { hostGroups: { slots: unknown[] }[][] }).hostGroups
  .flat()
  .reduce((n, h) => n + h.slots.length, 0);
const availability = await measure(`availability: 20 hosts, whole window (${offered} slots)`, gatewayUrl, {
  path: `/smart-schedules/${bench.scheduleId}/availability`,
  method: "POST",
  body: availabilityBody,
  connections: 2,
});

console.log("\n| target | req/s | p50 ms | p99 ms | requests |");
console.log("|---|---|---|---|---|");
for (const r of [gateway, baseline, availability]) {
  console.log(`| ${r.name} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.total} |`);
}
console.log(`\nratio gateway/bare (req/s): ${(gateway.rps / baseline.rps).toFixed(3)}`);
console.log(
  `node ${process.version}, ${connections} connections, ${duration}s per target, ${tokenCount} tokens, rate limits on\n`,
);

await bare.close();
await platform.close();
