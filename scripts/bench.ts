/**
 * npm run bench — GET /organizations/me through the whole embedded gateway (API key,
 * scopes, rate limits, signed Connect call, PGlite) against a bare fastify route returning
 * the same JSON, in the same process and run. Prints req/s, p50, p99 and the ratio.
 *
 *   npm run bench -- [--duration 10] [--connections 10]
 */
import { parseArgs } from "node:util";
import { gatewayConfigSpec } from "@platform/gateway/config";
import { ManualClock } from "@platform/kit/clock";
import { loadConfig } from "@platform/kit/config";
import { createLogger } from "@platform/kit/logger";
import { createEmbeddedPlatform } from "@platform/runtime/platform";
import autocannon from "autocannon";
import Fastify from "fastify";

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "10" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log("usage: npm run bench -- [--duration SECONDS] [--connections N]");
  process.exit(0);
}
const duration = Number(values.duration);
const connections = Number(values.connections);

const logger = createLogger("bench", "error");
const clock = new ManualClock(new Date());
// Rate limits would stop a benchmark within a second; lift them for this run only.
const gatewayConfig = { ...loadConfig(gatewayConfigSpec, {}), LOG_LEVEL: "error" as const, RATE_LIMITS_DISABLED: true };
const platform = await createEmbeddedPlatform({
  logger,
  clock,
  gateway: gatewayConfig,
  sandboxSeed: "bench",
  seedSandbox: true,
  adminSecret: "bench-admin-secret",
});
const keys = await platform.sandboxKeys();
const key = keys.find((k) => k.name === "acme-full")?.key ?? "";
const gatewayUrl = await platform.app.listen({ port: 0, host: "127.0.0.1" });

const sample = await fetch(`${gatewayUrl}/api/v1alpha1/organizations/me`, { headers: { "X-Platform-Api-Key": key } });
if (sample.status !== 200) throw new Error(`sanity request failed: ${sample.status} ${await sample.text()}`);
const body = await sample.text();

const bare = Fastify({ logger: false });
bare.get("/api/v1alpha1/organizations/me", async (_req, reply) => reply.type("application/json").send(body));
const bareUrl = await bare.listen({ port: 0, host: "127.0.0.1" });

async function measure(name: string, url: string) {
  process.stderr.write(`running ${name} for ${duration}s with ${connections} connections…\n`);
  const r = await autocannon({
    url: `${url}/api/v1alpha1/organizations/me`,
    headers: { "X-Platform-Api-Key": key },
    connections,
    duration,
  });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${name}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, total: r.requests.total };
}

await measure("warm-up", gatewayUrl).catch(() => undefined);
const gateway = await measure("gateway GET /organizations/me", gatewayUrl);
const baseline = await measure("bare fastify route", bareUrl);

console.log("\n| target | req/s | p50 ms | p99 ms | requests |");
console.log("|---|---|---|---|---|");
for (const r of [gateway, baseline]) {
  console.log(`| ${r.name} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.total} |`);
}
console.log(`\nratio gateway/bare (req/s): ${(gateway.rps / baseline.rps).toFixed(3)}`);
console.log(`node ${process.version}, ${connections} connections, ${duration}s per target\n`);

await bare.close();
await platform.close();
