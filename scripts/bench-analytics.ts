/**
 * npm run bench -- --suite analytics — buyer signals at scale: loads 1,000,000 email events
 * for the sandbox's Acme into the embedded platform's analytics database (through the
 * ingestion function, in batches, rollups included), then measures GET
 * /buyer-signals/summary, /activity and /sent-emails through the whole gateway.
 *
 * Rate limits stay on: the load is spread over freshly issued tokens so that no token passes
 * the 300 reads/minute of the spec; a 429 fails the run.
 *
 *   npm run bench -- --suite analytics [--events 1000000] [--duration 10] [--connections 10] [--tokens 400]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { analyticsReads, SENT_EMAIL_SORT_KEYS } from "@platform/analytics/server";
import { AnalyticsAdminService } from "@platform/contracts/analytics";
import { IdentityAdminService } from "@platform/contracts/identity";
import { gatewayConfigSpec } from "@platform/gateway/config";
import { loadConfig } from "@platform/kit/config";
import { adminClientInterceptor, httpTransport } from "@platform/kit/connect";
import { createLogger } from "@platform/kit/logger";
import { createEmbeddedPlatform } from "@platform/runtime/platform";
import { sandboxUserId } from "@platform/sandbox";
import autocannon from "autocannon";
import { generatedBlasts } from "../cli/src/generate.js";
import { loadEmailEvents, stringFlags, suiteArgs } from "./bench-support.js";

const values = suiteArgs(
  stringFlags({
    events: "1000000",
    duration: "10",
    connections: "10",
    tokens: "400",
    batch: "10000",
  }),
  "usage: npm run bench -- --suite analytics [--events N] [--duration SECONDS] [--connections N] [--tokens N] [--batch N]",
);
const eventCount = Number(values.events);
const duration = Number(values.duration);
const connections = Number(values.connections);
const tokenCount = Number(values.tokens);
const batchSize = Number(values.batch);

const SEED = "bench";
const ADMIN_SECRET = "bench-admin-secret";
const logger = createLogger("bench-analytics", "error");
// On disk, not in memory: a million events and their rollups are more than PGlite's heap should hold.
const dataDir = mkdtempSync(join(tmpdir(), "bench-analytics-"));
const platform = await createEmbeddedPlatform({
  dataDir,
  logger,
  gateway: { ...loadConfig(gatewayConfigSpec, {}), LOG_LEVEL: "error" as const },
  sandboxSeed: SEED,
  seedSandbox: true,
  adminSecret: ADMIN_SECRET,
  adminPort: 0,
});
const adminTransport = httpTransport(`http://127.0.0.1:${platform.admin?.port}`, [
  adminClientInterceptor(ADMIN_SECRET),
]);
const acme = (await platform.sandboxKeys()).find((k) => k.name === "acme-full");
if (!acme) throw new Error("sandbox has no acme-full token");
const db = platform.dbs.analytics;
if (!db) throw new Error("the embedded platform runs no analytics service");

const blastRecipients: number[] = [];
const loadStart = performance.now();
const { options: run, loaded } = await loadEmailEvents(db, {
  orgId: acme.orgId,
  events: eventCount,
  senders: ["acme-ae", "acme-sdr", "acme-owner"].map((label) => ({
    userId: sandboxUserId(SEED, label),
    displayName: label,
  })),
  now: new Date(),
  batch: batchSize,
  blastRecipients,
});
const loadSeconds = (performance.now() - loadStart) / 1000;
await createClient(AnalyticsAdminService, adminTransport).upsertEmailBlasts({
  blasts: generatedBlasts(run, blastRecipients),
});
// What autovacuum would have done on a real Postgres by now: planner statistics, and the
// visibility map that lets the summary's covering index answer without the table.
await db.exec("VACUUM ANALYZE");
const [volume] = await db.query<Record<string, number>>(
  `SELECT (SELECT count(*) FROM analytics.email_events WHERE org_id = $1) AS events,
          (SELECT count(*) FROM analytics.sent_emails WHERE org_id = $1) AS emails,
          (SELECT count(*) FROM analytics.recipients WHERE org_id = $1) AS recipients`,
  [acme.orgId],
);

// The store's reads alone, one at a time: what the database costs of each request.
const reads = analyticsReads(db);
const since = new Date(Date.now() - 29 * 86_400_000);
async function median(fn: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 21; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  return times.sort((a, b) => a - b)[10] ?? 0;
}
const pageQuery = (key: string) => ({
  sort: {
    key: SENT_EMAIL_SORT_KEYS[key] ?? { expr: "e.sent_at", type: "timestamptz" as const, nullable: false },
    descending: true,
  },
  limit: 26,
  since,
  search: "",
  emailType: "all" as const,
});
const dbTimes = {
  summary: await median(() => reads.recipientSummary(acme.orgId, since)),
  activity: await median(() => reads.orgActivity(acme.orgId, since, ["sends", "opens", "clicks", "replies"])),
  sentEmails: await median(() => reads.listSentEmails(acme.orgId, pageQuery("sentAt"))),
  sentEmailsByOpens: await median(() => reads.listSentEmails(acme.orgId, pageQuery("opens"))),
};

process.stderr.write(`issuing ${tokenCount} tokens…\n`);
const identityAdmin = createClient(IdentityAdminService, adminTransport);
const keys: string[] = [];
for (let i = 0; i < tokenCount; i++) {
  const { key } = await identityAdmin.createToken({
    orgId: acme.orgId,
    name: `bench-analytics-${i}`,
    scopes: ["buyer-signals:read"],
  });
  keys.push(key);
}
const gatewayUrl = await platform.app.listen({ port: 0, host: "127.0.0.1" });

async function measure(name: string, path: string, seconds = duration) {
  const probe = await fetch(`${gatewayUrl}/api/v1alpha1${path}`, {
    headers: { "X-Platform-Api-Key": acme?.key ?? "" },
  });
  if (probe.status !== 200) throw new Error(`${name}: ${probe.status} ${await probe.text()}`);
  process.stderr.write(`running ${name} for ${seconds}s with ${connections} connections…\n`);
  let next = 0;
  const r = await autocannon({
    url: `${gatewayUrl}/api/v1alpha1${path}`,
    connections,
    duration: seconds,
    requests: [
      {
        method: "GET",
        setupRequest: (req) => ({
          ...req,
          headers: { ...req.headers, "X-Platform-Api-Key": keys[next++ % keys.length] ?? "" },
        }),
      },
    ],
  });
  if (r.non2xx > 0 || r.errors > 0) {
    throw new Error(`${name}: ${r.non2xx} non-2xx, ${r.errors} errors (429s mean more --tokens are needed)`);
  }
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, total: r.requests.total };
}

await measure("warm-up", "/buyer-signals/summary?periodDays=30", 3);
const results = [
  await measure("GET /buyer-signals/summary?periodDays=30", "/buyer-signals/summary?periodDays=30"),
  await measure("GET /buyer-signals/activity?periodDays=30", "/buyer-signals/activity?periodDays=30"),
  await measure("GET /buyer-signals/sent-emails?periodDays=30", "/buyer-signals/sent-emails?periodDays=30"),
  await measure("GET /buyer-signals/sent-emails?sort=-opens", "/buyer-signals/sent-emails?periodDays=30&sort=-opens"),
];

console.log(
  `\n${Number(volume?.events).toLocaleString("en-US")} events, ${Number(volume?.emails).toLocaleString("en-US")} sent emails, ` +
    `${Number(volume?.recipients).toLocaleString("en-US")} recipients for one org; ` +
    `loaded in ${loadSeconds.toFixed(0)} s (${(loaded / loadSeconds).toFixed(0)} events/s, batches of ${batchSize})\n`,
);
console.log("| target | req/s | p50 ms | p99 ms | requests |");
console.log("|---|---|---|---|---|");
for (const r of results) console.log(`| ${r.name} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.total} |`);
console.log(
  `\ndatabase alone (median of 21, ms): summary ${dbTimes.summary.toFixed(1)}, activity ${dbTimes.activity.toFixed(1)}, ` +
    `sent-emails ${dbTimes.sentEmails.toFixed(1)}, sent-emails by opens ${dbTimes.sentEmailsByOpens.toFixed(1)}`,
);
console.log(
  `\nnode ${process.version}, ${connections} connections, ${duration}s per target, ${tokenCount} tokens, rate limits on\n`,
);

await platform.close();
rmSync(dataDir, { recursive: true, force: true });
