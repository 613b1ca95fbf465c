/**
 * npm run bench — GET /organizations/me through the whole embedded gateway (API key,
 * scopes, rate limits, signed Connect call, PGlite) against a bare fastify route returning
 * the same JSON, in the same process and run. Prints req/s, p50, p99 and the ratio.
 *
 * Rate limits stay on: the load is spread over freshly issued tokens so that no token passes
 * the 300 reads/minute of the spec; a 429 fails the run.
 *
 * `npm run bench -- --help` lists the options and the other suites (SUITES below).
 */
import { stringFlags, suiteArgs, usageError, wholeNumber } from "./bench-support.js";

// `--suite <name>` runs another benchmark instead; each takes `--help` of its own.
const SUITES: Record<string, { what: string; run: () => Promise<unknown> }> = {
  analytics: { what: "buyer signals at 1,000,000 email events", run: () => import("./bench-analytics.js") },
  distributed: {
    what: "the distributed runtime's request path (starts a stack when none runs)",
    run: () => import("./bench-distributed.js"),
  },
  availability: {
    what: "availability of a 20-host team against a running stack",
    run: () => import("./bench-availability.js"),
  },
  compression: { what: "brotli and gzip against identity, same run", run: () => import("./bench-compression.js") },
  events: { what: "webhook delivery, the outbox relay, restarts", run: () => import("./bench-events.js") },
  hostile: {
    what: "the gateway's memory under 400 stalled keyless uploads (a process of its own)",
    run: () => import("./bench-hostile.js"),
  },
  rpc: { what: "one unary Connect call: Connect-ES against kit's lean path", run: () => import("./bench-rpc.js") },
  ratelimit: { what: "the gateway's rate-limit stores on Redis", run: () => import("./bench-ratelimit.js") },
  roll: {
    what: "every process replaced under 500 req/s: restart against roll (a stack)",
    run: () => import("./bench-roll.js"),
  },
};
const USAGE = `usage: npm run bench -- [--duration SECONDS] [--connections N] [--tokens N]
       npm run bench -- --suite NAME [its options; --help lists them]

Without --suite: GET /organizations/me through the whole embedded gateway against a bare
fastify route, in one process and run, then availability of a 20-host schedule.
  --duration SECONDS   each measurement's length (default 10)
  --connections N      concurrent connections (default 10)
  --tokens N           API keys the load is spread over, so no key passes the read limit (default 600)

Suites:
${Object.entries(SUITES)
  .map(([name, s]) => `  ${name.padEnd(13)} ${s.what}`)
  .join("\n")}`;

const suiteAt = process.argv.indexOf("--suite");
if (suiteAt !== -1) {
  const suite = process.argv[suiteAt + 1] ?? "";
  const chosen = SUITES[suite];
  if (!chosen) usageError(`unknown --suite '${suite}'; the suites are: ${Object.keys(SUITES).join(", ")}`);
  await chosen.run();
  process.exit(process.exitCode ?? 0);
}

const values = suiteArgs(stringFlags({ duration: "10", connections: "10", tokens: "600" }), USAGE);
const duration = wholeNumber("duration", values.duration);
const connections = wholeNumber("connections", values.connections);
const tokenCount = wholeNumber("tokens", values.tokens);

// Loaded once the command line is known good: the embedded platform takes seconds to load, and
// neither another suite nor a usage error needs it.
const [{ systemClock }, { seedBenchSchedule }, { default: autocannon }, { default: Fastify }, { benchPlatform }] =
  await Promise.all([
    import("@platform/kit/clock"),
    import("@platform/scheduling/server"),
    import("autocannon"),
    import("fastify"),
    import("./bench-embedded.js"),
  ]);

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
