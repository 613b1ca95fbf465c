// The stopped-worker backlog: what an operator sees when webhooks-delivery was down while the
// platform kept writing. Deal events pile up on the revenue topic while the worker is stopped;
// started again, it fans them out (Kafka → attempts) and delivers them. Timed from the restart
// (the new process's start) to the last delivery, so the fan-out, the claims, the sends and
// the process's own start-up all count.
import { openPg } from "@platform/kit/db";
import { KafkaBus } from "@platform/kit/kafka-bus";
import { kitMigrations, migrate } from "@platform/kit/migrate";
import { webhooksMigrations } from "@platform/webhooks/server";
import pg from "pg";
import { cpuMs, sleep } from "../bench-support.js";
import {
  cpuSeconds,
  freshDatabase,
  KAFKA_BROKERS,
  logger,
  portBase,
  prefix,
  report,
  run,
  startProc,
  values,
} from "./context.js";
import { dealCreated } from "./delivery.js";
import { deliveryEnv, insertSubscriptions, startReceivers } from "./receivers.js";

/**
 * `--stopped-events` deal events of one org with `--subscriptions` subscriptions (9: 400 events
 * give 3,600 deliveries) published while the worker is stopped, then the worker started again
 * under the same static identity (as the stack and the manifests run it). `endpoints` is how
 * many receivers the subscriptions point at: one per subscription, or all at one endpoint
 * (whose per-endpoint cap, `--cap`, then bounds the whole drain).
 */
export async function stoppedBacklog(shape: "spread" | "one-endpoint"): Promise<void> {
  const events = Number(values["stopped-events"]);
  const subscriptions = Number(values.subscriptions);
  const expected = events * subscriptions;
  const cap = Number(values.cap);
  const dbName = `${prefix}bench_wh_stopped_${shape === "spread" ? "n" : "1"}`;
  const url = await freshDatabase(dbName);
  const db = openPg({ url, schema: "webhooks" });
  await migrate(db, [kitMigrations, webhooksMigrations]);
  // One org of this run (the topic keeps earlier runs' events), all its subscriptions receiving deal events.
  const org = `org_bench_stopped_${shape}_${run}`;
  const receiverCount = shape === "spread" ? subscriptions : 1;
  const receivers = await startReceivers(receiverCount, portBase + 200, () => org);
  await insertSubscriptions(
    db,
    Array.from({ length: subscriptions }, (_, i) => receivers.url(shape === "spread" ? i : 0)),
    () => org,
  );
  const port = portBase + 50;
  const env = deliveryEnv(url, {
    DELIVERY_PORT: String(port),
    PORT: String(port + 1),
    // The stack's setting: /metrics served (OpenTelemetry's meter provider is part of every start-up).
    METRICS_PORT: String(port + 2),
    WEBHOOKS_PER_ENDPOINT_CONCURRENCY: String(cap),
    // The stack's setting (scripts/stack.sh): a static member, whose restart takes its partitions back at once.
    KAFKA_GROUP_INSTANCE_ID: `bench-stopped-${shape}-${run}`,
  });
  const entry = "services/webhooks/src/delivery-main.ts";
  // The worker ran (joined its group, took its partitions) and was stopped: then the events came.
  const before = await startProc(`webhooks-delivery-stopped-${shape}`, entry, env, port);
  await sleep(500);
  await before.stop();
  const bus = new KafkaBus({ brokers: KAFKA_BROKERS.split(","), clientId: "bench-stopped", logger });
  const ids = new Set<string>();
  for (let i = 0; i < events; i += 200) {
    const batch = Array.from({ length: Math.min(200, events - i) }, (_, j) => {
      const { id, message } = dealCreated(org, i + j, `Backlog deal ${i + j}`);
      ids.add(id);
      return message;
    });
    await bus.publish("platform.revenue.v1", batch);
  }
  await bus.close();

  // The Postgres backends of the worker's database, sampled while they run (a backend that
  // ends takes its CPU with it); the watcher's own connection is not one of them.
  const watch = new pg.Client({ connectionString: url });
  await watch.connect();
  const pgCpu = new Map<number, number>();
  const pg0 = new Map<number, number>();
  const samplePg = async () => {
    const { rows } = await watch.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
      [dbName],
    );
    for (const { pid } of rows) {
      const ms = cpuMs(pid);
      if (ms === undefined) continue;
      if (!pg0.has(pid)) pg0.set(pid, pgCpu.has(pid) ? (pgCpu.get(pid) as number) : 0);
      pgCpu.set(pid, ms);
    }
  };
  // When the fan-out had queued every attempt (the worker may deliver before that).
  let fannedOutAt = Number.NaN;
  const sampleFanOut = async () => {
    if (!Number.isNaN(fannedOutAt)) return;
    const { rows } = await watch.query<{ n: number }>("SELECT count(*)::int AS n FROM webhooks.attempts");
    if ((rows[0]?.n ?? 0) >= expected) fannedOutAt = performance.now();
  };
  const commits = async () =>
    Number(
      (await watch.query("SELECT xact_commit FROM pg_stat_database WHERE datname = $1", [dbName])).rows[0]?.xact_commit,
    );
  const commits0 = await commits();
  const ticker = setInterval(() => void Promise.all([samplePg(), sampleFanOut()]).catch(() => {}), 50);

  const worker = await startProc(`webhooks-delivery-stopped-${shape}`, entry, env, port);
  const pid = worker.child.pid as number;
  // Its start-up's CPU apart (loading the bundle, migrations, joining the group).
  const cpuReady = cpuSeconds(pid);
  const deadline = Date.now() + Number(values["drain-timeout"]) * 1000;
  let cpu = cpuSeconds(pid);
  while (receivers.arrivals.length < expected && Date.now() < deadline) {
    await sleep(10);
    cpu = cpuSeconds(pid);
  }
  clearInterval(ticker);
  await samplePg();
  let pgMs = 0;
  for (const [p, ms] of pgCpu) pgMs += ms - (pg0.get(p) ?? 0);
  const arrivals = receivers.arrivals;
  const last = arrivals.at(-1)?.at ?? Number.NaN;
  const first = arrivals[0]?.at ?? Number.NaN;
  // Settlement may trail the last arrival by a batch.
  let persisted = 0;
  for (let i = 0; i < 100; i++) {
    const [row] = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM webhooks.attempts WHERE status = 'succeeded'",
    );
    persisted = row?.n ?? 0;
    if (persisted >= expected) break;
    await sleep(100);
  }
  await worker.stop();
  // The statistics reach pg_stat_database when a backend ends (or after a second).
  await sleep(1200);
  const transactions = (await commits()) - commits0;
  await watch.end();
  const fromStart = (last - worker.startedAt) / 1000;
  const fromFirst = (last - first) / 1000;
  const ours = arrivals.filter((a) => ids.has(a.id)).length;
  report(
    `stopped-worker backlog, ${events} events × ${subscriptions} subscriptions on ` +
      `${shape === "spread" ? `${receiverCount} endpoints` : "one endpoint"}, cap ${cap}/endpoint: ` +
      `${arrivals.length}/${expected} deliveries (${ours} of this run's events) ` +
      `**${(arrivals.length / fromStart).toFixed(0)}/s from the restart** to the last ` +
      `(${fromStart.toFixed(2)} s; process start-up ${((worker.readyAt - worker.startedAt) / 1000).toFixed(2)} s, ` +
      `first delivery ${((first - worker.startedAt) / 1000).toFixed(2)} s after start, ` +
      `every attempt queued ${((fannedOutAt - worker.startedAt) / 1000).toFixed(2)} s after start; ` +
      `${((arrivals.length - 1) / fromFirst).toFixed(0)}/s from the first delivery); ${persisted} persisted succeeded; ` +
      `wrong-org ${receivers.wrongOrg()}; CPU µs per delivery: delivery process ` +
      `${((cpu * 1e6) / Math.max(arrivals.length, 1)).toFixed(0)} from its start, ` +
      `${(((cpu - cpuReady) * 1e6) / Math.max(arrivals.length, 1)).toFixed(0)} from its readiness (start-up ${cpuReady.toFixed(2)} s CPU), its Postgres backends ` +
      `${((pgMs * 1e3) / Math.max(arrivals.length, 1)).toFixed(0)}; ` +
      `${transactions} transactions committed in its database (${(transactions / Math.max(arrivals.length, 1)).toFixed(3)} per delivery)`,
  );
  // Where the time went: deliveries per half second since the process started.
  const buckets: number[] = [];
  for (const a of arrivals) {
    const b = Math.floor((a.at - worker.startedAt) / 500);
    buckets[b] = (buckets[b] ?? 0) + 1;
  }
  report(`  deliveries per 0.5 s from the start: ${Array.from(buckets, (n) => n ?? 0).join(" ")}`);
  await receivers.close();
  await db.close();
}
