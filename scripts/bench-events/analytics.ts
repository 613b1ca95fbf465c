import { analyticsReads, periodStart } from "@platform/analytics/bench";
import { ANALYTICS_SCHEMA, analyticsMigrations } from "@platform/analytics/server";
import { openPg } from "@platform/kit/db";
import { newId } from "@platform/kit/ids";
import { kitMigrations, migrate } from "@platform/kit/migrate";
import { loadEmailEvents, pct } from "../bench-support.js";
import { fmt, freshDatabase, prefix, report, values } from "./context.js";

// ---------------------------------------------------------------- analytics

/**
 * Analytics on the real Postgres: ingestion rate (the ingestion function in batches, raw events
 * and every rollup in one transaction per batch) and the summary's database time for an org
 * with --small events beside one with --events, in the same database and run.
 */
export async function analytics(): Promise<void> {
  const url = await freshDatabase(`${prefix}bench_analytics`);
  const db = openPg({ url, schema: ANALYTICS_SCHEMA });
  await migrate(db, [kitMigrations, analyticsMigrations]);
  const now = new Date();
  const senders = [{ userId: newId("usr_"), displayName: "Bench" }];
  const load = async (orgId: string, events: number) =>
    (await loadEmailEvents(db, { orgId, events, senders, now, batch: 10_000 })).rate;
  const smallOrg = newId("org_");
  const bigOrg = newId("org_");
  await load(smallOrg, Number(values.small));
  const rate = await load(bigOrg, Number(values.events));
  await db.exec("VACUUM ANALYZE");
  const reads = analyticsReads(db);
  const since = periodStart(now, 30);
  const median = async (orgId: string) => {
    const times: number[] = [];
    for (let i = 0; i < 41; i++) {
      const t = performance.now();
      await reads.recipientSummary(orgId, since);
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    return { p50: pct(times, 50), p99: pct(times, 99) };
  };
  // Interleaved, so both see the same machine.
  await median(smallOrg);
  const small = await median(smallOrg);
  const big = await median(bigOrg);
  const [volume] = await db.query<{ recipients: number }>(
    "SELECT count(*)::int AS recipients FROM analytics.recipients WHERE org_id = $1",
    [bigOrg],
  );
  report(
    `analytics on Postgres: ingestion **${rate.toFixed(0)} events/s** (${values.events} events, batches of 10,000); ` +
      `summary (periodDays=30, database alone, 41 runs) at ${values.small} events p50 **${fmt(small.p50)} ms** ` +
      `(p99 ${fmt(small.p99)}), at ${values.events} events (${volume?.recipients} recipients) p50 **${fmt(big.p50)} ms** ` +
      `(p99 ${fmt(big.p99)}): ratio **${(big.p50 / small.p50).toFixed(2)}**`,
  );
  await db.close();
}
