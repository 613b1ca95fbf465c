import { openPg } from "@platform/kit/db";
import { newId } from "@platform/kit/ids";
import { KafkaBus } from "@platform/kit/kafka-bus";
import { kitMigrations, migrate } from "@platform/kit/migrate";
import { toBusMessage } from "@platform/kit/outbox";
import { webhooksMigrations } from "@platform/webhooks/server";
import pg from "pg";
import { cpuMs, sleep } from "../bench-support.js";
import {
  attemptCount,
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
import { deliveryEnv, insertSubscriptions, startReceivers } from "./receivers.js";

/**
 * A revenue.deal.created message of `orgId`, as revenue's relay publishes it. Its id has the
 * public form (evt_ + 24), which the fan-out keeps as the webhook-id (others it derives a public
 * id from: see publicEventId), so a receiver's ids are these.
 */
export function dealCreated(orgId: string, n: number, name: string) {
  const id = newId("evt_");
  const envelope = {
    id,
    type: "revenue.deal.created",
    source: "revenue",
    time: new Date().toISOString(),
    data: { orgId, deal: { id: `deal_${n}`, name, stage: "qualification" } },
  };
  return { id, message: toBusMessage(envelope, orgId) };
}

// ---------------------------------------------------------------- drain

export async function drain(endpoints: number, cap: number): Promise<void> {
  const url = await freshDatabase(`${prefix}bench_wh_drain${endpoints}`);
  const db = openPg({ url, schema: "webhooks" });
  await migrate(db, [kitMigrations, webhooksMigrations]);
  const orgOf = (i: number) => `org_bench${i}`;
  const receivers = await startReceivers(endpoints, portBase + 100, orgOf);
  const subs = await insertSubscriptions(
    db,
    Array.from({ length: endpoints }, (_, i) => receivers.url(i)),
    orgOf,
  );
  // The backlog: one event per attempt, spread round-robin over the subscriptions.
  await db.query(
    `INSERT INTO webhooks.events (id, org_id, type, data, occurred_at)
     SELECT 'evt_' || g, 'org_bench' || (g % $2), 'revenue.deal.created',
            jsonb_build_object('orgId', 'org_bench' || (g % $2),
              'deal', jsonb_build_object('id', 'deal_' || g, 'name', 'Bench deal ' || g, 'stage', 'qualification')),
            now()
       FROM generate_series(1, $1) g`,
    [attemptCount, endpoints],
  );
  await db.query(
    `INSERT INTO webhooks.attempts (id, subscription_id, event_id, attempt, trigger, status, scheduled_at, retry_step, created_at)
     SELECT 'wd_bench' || g, ($3::text[])[(g % $2) + 1], 'evt_' || g, 1, 'event', 'pending', now(), 1, now()
       FROM generate_series(1, $1) g`,
    [attemptCount, endpoints, subs],
  );
  await db.exec("VACUUM ANALYZE webhooks.attempts");
  const port = portBase + 10;
  const done = new Promise<void>((resolve) =>
    receivers.watch(() => {
      if (receivers.arrivals.length >= attemptCount) resolve();
    }),
  );
  const worker = await startProc(
    `webhooks-delivery-drain${endpoints}`,
    "services/webhooks/src/delivery-main.ts",
    deliveryEnv(url, {
      DELIVERY_PORT: String(port),
      PORT: String(port + 1),
      WEBHOOKS_PER_ENDPOINT_CONCURRENCY: String(cap),
    }),
    port,
  );
  const cpu0 = cpuSeconds(worker.child.pid as number);
  const timeout = sleep(Number(values["drain-timeout"]) * 1000).then(() => "timeout");
  if ((await Promise.race([done, timeout])) === "timeout") {
    report(`drain ${endpoints}: timed out with ${receivers.arrivals.length}/${attemptCount} delivered`);
  }
  const cpu = cpuSeconds(worker.child.pid as number) - cpu0;
  const first = receivers.arrivals[0]?.at ?? 0;
  const last = receivers.arrivals.at(-1)?.at ?? 0;
  // Settlement may trail the last arrival by a batch.
  let persisted = 0;
  for (let i = 0; i < 100; i++) {
    const [row] = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM webhooks.attempts WHERE status = 'succeeded'",
    );
    persisted = row?.n ?? 0;
    if (persisted >= attemptCount) break;
    await sleep(100);
  }
  await worker.stop();
  const seconds = (last - first) / 1000;
  const uniq = new Set(receivers.arrivals.map((a) => a.id)).size;
  report(
    `drain to ${endpoints} endpoint(s), cap ${cap}/endpoint, concurrency ${values.concurrency}: ` +
      `${receivers.arrivals.length} deliveries (${uniq} distinct) in ${seconds.toFixed(2)} s = ` +
      `**${((receivers.arrivals.length - 1) / seconds).toFixed(0)}/s**; ${persisted} attempts persisted as succeeded; ` +
      `wrong-org deliveries ${receivers.wrongOrg()}; delivery process CPU ${cpu.toFixed(1)} s ` +
      `(${((cpu / seconds) * 100).toFixed(0)} % of a core); first delivery ${((first - worker.readyAt) / 1000).toFixed(2)} s after ready`,
  );
  await receivers.close();
  await db.close();
}

// ---------------------------------------------------------------- idle CPU

export async function idleCpu(): Promise<void> {
  const url = await freshDatabase(`${prefix}bench_wh_idle`);
  const api = await startProc(
    "webhooks",
    "services/webhooks/src/main.ts",
    { DATABASE_URL: url, PORT: String(portBase + 20), SANDBOX_ENABLED: "false" },
    portBase + 20,
  );
  const worker = await startProc(
    "webhooks-delivery-idle",
    "services/webhooks/src/delivery-main.ts",
    deliveryEnv(url, { DELIVERY_PORT: String(portBase + 21), PORT: String(portBase + 22) }),
    portBase + 21,
  );
  await sleep(5000);
  const window = 30;
  const before = [api, worker].map((p) => cpuSeconds(p.child.pid as number));
  await sleep(window * 1000);
  const used = [api, worker].map((p, i) => cpuSeconds(p.child.pid as number) - (before[i] ?? 0));
  report(
    `idle for ${window} s: webhooks API process ${(((used[0] ?? 0) / window) * 100).toFixed(2)} % of a core ` +
      `(${(used[0] ?? 0).toFixed(2)} s CPU), delivery process ${(((used[1] ?? 0) / window) * 100).toFixed(2)} % ` +
      `(${(used[1] ?? 0).toFixed(2)} s CPU)`,
  );
  await worker.stop();
  await api.stop();
}

// ---------------------------------------------------------------- restart to first delivery

export async function restart(): Promise<void> {
  const url = await freshDatabase(`${prefix}bench_wh_restart`);
  const db = openPg({ url, schema: "webhooks" });
  await migrate(db, [kitMigrations, webhooksMigrations]);
  // An org of this run: the topic keeps earlier runs' events, which must not become a backlog here.
  const orgOf = () => `org_bench_restart_${run}`;
  const receivers = await startReceivers(1, portBase + 150, orgOf);
  await insertSubscriptions(db, [receivers.url(0)], orgOf);
  const bus = new KafkaBus({ brokers: KAFKA_BROKERS.split(","), clientId: "bench-restart", logger });
  let n = 0;
  const sent = new Set<string>();
  let publishing = true;
  const event = () => {
    const { id, message } = dealCreated(orgOf(), ++n, "Restart");
    sent.add(id);
    return message;
  };
  // Events keep coming, 20 a second, throughout.
  const publisher = (async () => {
    while (publishing) {
      await bus.publish("platform.revenue.v1", [event()]).catch(() => {});
      await sleep(50);
    }
  })();
  // Nothing lost: every event published reaches the receiver (at least once). Only this run's
  // events count: the topic also holds earlier runs', which a new group reads too.
  const ours = () => receivers.arrivals.filter((a) => sent.has(a.id));
  const deliveredOrTimeout = async () => {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && new Set(ours().map((a) => a.id)).size < sent.size) await sleep(200);
  };
  const port = portBase + 30;
  const entry = "services/webhooks/src/delivery-main.ts";
  const firstAfter = async (since: number) => {
    for (;;) {
      const hit = receivers.arrivals.find((a) => a.at > since);
      if (hit) return hit.at;
      await sleep(5);
    }
  };
  // Side by side: the worker joining its group dynamically (no KAFKA_GROUP_INSTANCE_ID), then
  // as a static member (what the stack and the manifests set): a kill -9 costs the dynamic
  // worker the dead member's session timeout.
  for (const membership of ["dynamic", "static"] as const) {
    const env = deliveryEnv(url, {
      DELIVERY_PORT: String(port),
      PORT: String(port + 1),
      // The stack's setting: /metrics served (OpenTelemetry's meter provider is part of every start-up).
      METRICS_PORT: String(port + 2),
      ...(membership === "static" ? { KAFKA_GROUP_INSTANCE_ID: `bench-restart-${run}` } : {}),
    });
    let worker = await startProc("webhooks-delivery-restart", entry, env, port);
    await firstAfter(worker.readyAt);
    for (const signal of ["SIGTERM", "SIGKILL", "SIGTERM"] as const) {
      await sleep(2000);
      if (signal === "SIGKILL") {
        // The worker is killed busy: a burst of 500 events just before, so it holds claims on
        // the endpoint (up to twice its cap) that only its lease's end, or its restart under
        // the same identity (static membership), frees.
        await bus.publish("platform.revenue.v1", Array.from({ length: 500 }, event));
        await sleep(300);
      }
      await worker.stop(signal);
      const down = performance.now();
      // What the stopped worker left claimed: a kill -9 leaves its leases to run out.
      const [left] = await db.query<{ leased: number; pending: number }>(
        `SELECT count(*) FILTER (WHERE leased_until > now())::int AS leased,
                count(*) FILTER (WHERE status = 'pending')::int AS pending FROM webhooks.attempts`,
      );
      await sleep(1000);
      worker = await startProc("webhooks-delivery-restart", entry, env, port);
      const first = await Promise.race([firstAfter(worker.startedAt), sleep(90_000).then(() => Number.NaN)]);
      report(
        `restart (${membership} membership) after ${signal === "SIGTERM" ? "a graceful stop (SIGTERM)" : "kill -9"}: first delivery ` +
          `**${((first - worker.startedAt) / 1000).toFixed(2)} s** after the process started ` +
          `(${((first - worker.readyAt) / 1000).toFixed(2)} s after it listened; process start-up ` +
          `${((worker.readyAt - worker.startedAt) / 1000).toFixed(2)} s; ${((first - down) / 1000).toFixed(2)} s after the old one stopped; ` +
          `it left ${left?.leased ?? 0} attempts leased, ${left?.pending ?? 0} pending)`,
      );
    }
    if (membership === "static") {
      // The count below needs a worker: stop publishing, let this one catch up, then stop it.
      publishing = false;
      await publisher;
      await deliveredOrTimeout();
    }
    await worker.stop();
  }
  const published = n;
  const got = new Set(ours().map((a) => a.id)).size;
  report(
    `restart: ${got}/${published} events delivered across the six restarts (duplicates ${ours().length - got}), wrong-org ${receivers.wrongOrg()}`,
  );
  await bus.close();
  await receivers.close();
  await db.close();
}

// ---------------------------------------------------------------- fan-out catch-up

/**
 * A backlog of `backlog` deal events on the revenue topic, spread over 20 orgs with no
 * subscriptions, then a delivery process started to catch up: its fan-out logs every event in
 * its org's event log (GET /events) in batches. Rate, and the CPU of the process and of its
 * Postgres backends per event.
 */
export async function fanOutCatchUp(): Promise<void> {
  const backlog = Number(values.backlog);
  const dbName = `${prefix}bench_wh_fanout`;
  const url = await freshDatabase(dbName);
  const db = openPg({ url, schema: "webhooks" });
  await migrate(db, [kitMigrations, webhooksMigrations]);
  const orgs = 20;
  const orgOf = (i: number) => `org_bench_fanout_${run}_${i % orgs}`;
  const bus = new KafkaBus({ brokers: KAFKA_BROKERS.split(","), clientId: "bench-fanout", logger });
  for (let i = 0; i < backlog; i += 500) {
    const batch = Array.from(
      { length: Math.min(500, backlog - i) },
      (_, j) => dealCreated(orgOf(i + j), i + j, `Bench deal ${i + j}`).message,
    );
    await bus.publish("platform.revenue.v1", batch);
  }
  await bus.close();
  const port = portBase + 40;
  const worker = await startProc(
    "webhooks-delivery-fanout",
    "services/webhooks/src/delivery-main.ts",
    deliveryEnv(url, { DELIVERY_PORT: String(port), PORT: String(port + 1) }),
    port,
  );
  // Watched on one connection of its own, with a query that reads 20 rows: the heads' positions
  // add up to the events logged. Its backend is not counted as the fan-out's.
  const watch = new pg.Client({ connectionString: url });
  await watch.connect();
  const logged = async () =>
    Number((await watch.query("SELECT coalesce(sum(position), 0) AS n FROM webhooks.event_log_heads")).rows[0]?.n);
  const backends = async () =>
    (
      await watch.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
        [dbName],
      )
    ).rows.map((r) => r.pid);
  const pgCpu = new Map<number, number>();
  const samplePg = async () => {
    // Sampled while they run: a backend that ends takes its CPU with it.
    for (const pid of await backends()) {
      const ms = cpuMs(pid);
      if (ms !== undefined) pgCpu.set(pid, ms);
    }
  };
  // From the first event logged (the consumer has joined its group) to the last.
  const deadline = Date.now() + Number(values["drain-timeout"]) * 1000;
  let n = await logged();
  while (n === 0 && Date.now() < deadline) {
    await sleep(5);
    n = await logged();
  }
  const first = performance.now();
  const firstCount = n;
  const cpu0 = cpuSeconds(worker.child.pid as number);
  await samplePg();
  const pg0 = new Map(pgCpu);
  while (n < backlog && Date.now() < deadline) {
    await sleep(20);
    await samplePg();
    n = await logged();
  }
  const seconds = (performance.now() - first) / 1000;
  const cpu = cpuSeconds(worker.child.pid as number) - cpu0;
  await samplePg();
  let pgMs = 0;
  for (const [pid, ms] of pgCpu) pgMs += ms - (pg0.get(pid) ?? 0);
  await watch.end();
  await worker.stop();
  const events = n - firstCount;
  report(
    `fan-out catch-up: ${n}/${backlog} events of ${orgs} orgs logged, ${events} of them in ${seconds.toFixed(2)} s ` +
      `after the first = **${(events / seconds).toFixed(0)}/s**; CPU per event: delivery process ` +
      `${((cpu * 1e6) / Math.max(events, 1)).toFixed(0)} µs, its Postgres backends ${((pgMs * 1e3) / Math.max(events, 1)).toFixed(0)} µs`,
  );
  await db.close();
}
