/**
 * npm run bench -- --suite events — the event pipeline at line rate, on the machine's real
 * Postgres and a Kafka broker (KAFKA_PORT, default 19092), every service a process of its own:
 *
 *   drain     a backlog of pending webhook attempts sent by the real delivery process to local
 *             receivers: one endpoint with its cap at 32, then 20 endpoints; drain rate, the
 *             attempts persisted as succeeded, the process's CPU, and every receiver got only its
 *             own org's events
 *   relay     commit → Kafka: outbox rows committed at a fixed rate (open loop), the kit's relay
 *             publishing, a consumer timing their arrival
 *   idle      CPU of the webhooks API and delivery processes doing nothing (their relays)
 *   restart   a delivery worker stopped (SIGTERM, then kill -9) and started again while events
 *             keep coming: time from its start to its first delivery
 *   latency   API response → receiver: PATCH /deals through the gateway at 100/s (open loop,
 *             latency from the scheduled send time), the deal.updated webhook timed at the receiver
 *   analytics ingestion rate on Postgres (--events, default 1,000,000) and the buyer-signals
 *             summary's database time for an org with --small (10,000) events beside that one
 *
 * Receivers are plain http on 127.0.0.1, which the delivery refuses unless
 * WEBHOOKS_ALLOW_PRIVATE_TARGETS=true (the documented development setting), set here for the
 * processes it starts. Ports: --port-base (default 37000) up to +299. Databases are named
 * <--db-prefix>bench_* and dropped at the end. `--cpu-prof DIR` profiles the delivery process.
 *
 *   npm run bench -- --suite events [--phases drain,relay,idle,restart,latency,analytics]
 *     [--attempts 10000] [--rate 100] [--seconds 15] [--cap 32] [--caps20 8] [--concurrency 128]
 *     [--port-base 37000] [--db-prefix pipe_] [--events 1000000] [--small 10000] [--drain-timeout 180]
 *   (drain1 and drain20 pick one of the two drains)
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import http from "node:http";
import { Socket } from "node:net";
import { parseArgs } from "node:util";
import { createClient } from "@connectrpc/connect";
import { analyticsReads, periodStart } from "@platform/analytics/bench";
import {
  ANALYTICS_SCHEMA,
  analyticsMigrations,
  type EmailEvent,
  emailEventOf,
  ingestEvents,
} from "@platform/analytics/server";
import { IdentityAdminService } from "@platform/contracts/identity";
import { adminClientInterceptor, httpTransport } from "@platform/kit/connect";
import { type Db, openPg } from "@platform/kit/db";
import { newId } from "@platform/kit/ids";
import { KafkaBus } from "@platform/kit/kafka-bus";
import { createLogger } from "@platform/kit/logger";
import { kitMigrations, migrate } from "@platform/kit/migrate";
import { enqueueEvent, toBusMessage } from "@platform/kit/outbox";
import { startOutboxRelay } from "@platform/kit/outbox-relay";
import { webhooksMigrations } from "@platform/webhooks/server";
import pg from "pg";
import { type GenerateOptions, generateEmailEvents } from "../cli/src/generate.js";

const { values } = parseArgs({
  options: {
    suite: { type: "string" },
    phases: { type: "string", default: "drain,relay,idle,restart,latency,analytics" },
    events: { type: "string", default: "1000000" },
    small: { type: "string", default: "10000" },
    attempts: { type: "string", default: "10000" },
    rate: { type: "string", default: "100" },
    seconds: { type: "string", default: "15" },
    cap: { type: "string", default: "32" },
    caps20: { type: "string", default: "8" },
    concurrency: { type: "string", default: "128" },
    "port-base": { type: "string", default: "37000" },
    "db-prefix": { type: "string", default: process.env.STACK_DB_PREFIX ?? "pipe_" },
    "cpu-prof": { type: "string" },
    "drain-timeout": { type: "string", default: "180" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log(
    "usage: npm run bench -- --suite events [--phases drain,drain1,drain20,relay,idle,restart,latency,analytics]\n" +
      "  [--attempts N] [--rate N] [--seconds N] [--cap N] [--caps20 N] [--concurrency N] [--port-base P]\n" +
      "  [--db-prefix X] [--events N] [--small N] [--drain-timeout S] [--cpu-prof DIR]",
  );
  process.exit(0);
}
const phases = new Set(values.phases.split(","));
const attemptCount = Number(values.attempts);
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const portBase = Number(values["port-base"]);
const prefix = values["db-prefix"];
const PG_URL = process.env.PG_URL ?? "postgres://postgres@127.0.0.1:5432";
const KAFKA_BROKERS = process.env.KAFKA_BROKERS ?? `127.0.0.1:${process.env.KAFKA_PORT ?? "19092"}`;
const CONTEXT_SECRET = "bench-events-context-secret-0123456789";
const ADMIN_SECRET = "bench-events-admin-secret-0123456789";
const run = Date.now().toString(36);
const logger = createLogger("bench-events", "error");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const results: string[] = [];
const report = (line: string) => {
  results.push(line);
  process.stderr.write(`${line}\n`);
};

// ---------------------------------------------------------------- helpers

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}
const fmt = (n: number) => n.toFixed(1);

async function freshDatabase(name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: `${PG_URL}/postgres` });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  created.push(name);
  return `${PG_URL}/${name}`;
}
const created: string[] = [];
async function dropDatabases(): Promise<void> {
  const admin = new pg.Client({ connectionString: `${PG_URL}/postgres` });
  await admin.connect();
  for (const name of created) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}

/** CPU seconds (user + system) a process has used so far, from /proc. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

interface Proc {
  name: string;
  child: ChildProcess;
  startedAt: number;
  readyAt: number;
  log: () => string;
  stop: (signal?: NodeJS.Signals) => Promise<void>;
}
const procs = new Set<Proc>();

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
    socket.connect(port, "127.0.0.1");
  });
}

/** Starts `node --import tsx entry` and waits until it listens on `port`. */
async function startProc(name: string, entry: string, env: Record<string, string>, port: number): Promise<Proc> {
  const profile =
    values["cpu-prof"] && name.startsWith("webhooks-delivery")
      ? ["--cpu-prof", `--cpu-prof-dir=${values["cpu-prof"]}`]
      : [];
  const startedAt = performance.now();
  const child = spawn(process.execPath, [...profile, "--import", "tsx", entry], {
    env: { ...process.env, LOG_LEVEL: "warn", PLATFORM_CONTEXT_SECRET: CONTEXT_SECRET, KAFKA_BROKERS, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d) => {
    out = (out + d).slice(-20_000);
  });
  child.stderr?.on("data", (d) => {
    out = (out + d).slice(-20_000);
  });
  const proc: Proc = {
    name,
    child,
    startedAt,
    readyAt: 0,
    log: () => out,
    stop: (signal = "SIGTERM") =>
      new Promise<void>((resolve) => {
        procs.delete(proc);
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const force = setTimeout(() => child.kill("SIGKILL"), 15_000);
        child.once("exit", () => {
          clearTimeout(force);
          resolve();
        });
        child.kill(signal);
      }),
  };
  procs.add(proc);
  const deadline = Date.now() + 90_000;
  while (!(await portOpen(port))) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}:\n${out}`);
    if (Date.now() > deadline) throw new Error(`${name} did not listen on ${port} within 90 s:\n${out}`);
    await sleep(50);
  }
  proc.readyAt = performance.now();
  return proc;
}

interface Arrival {
  id: string;
  at: number;
}
/**
 * Listens on `port`, or the next free one in the bench's range: the range lies inside Linux's
 * ephemeral ports, so an outgoing connection of any process may hold one for a while.
 */
async function listenInRange(server: http.Server, port: number): Promise<number> {
  for (let p = port; p < portBase + 1000; p++) {
    const ok = await new Promise<boolean>((resolve) => {
      const onError = () => resolve(false);
      server.once("error", onError);
      server.listen(p, "127.0.0.1", () => {
        server.off("error", onError);
        resolve(true);
      });
    });
    if (ok) return p;
  }
  throw new Error(`no free port from ${port} to ${portBase + 999}`);
}

/** Plain http receivers on consecutive ports; each knows the org its events must belong to. */
async function startReceivers(count: number, firstPort: number, orgOf: (i: number) => string) {
  const arrivals: Arrival[] = [];
  const perReceiver = new Array<number>(count).fill(0);
  let wrongOrg = 0;
  let onArrival: ((a: Arrival) => void) | undefined;
  const servers: http.Server[] = [];
  const ports: number[] = [];
  for (let i = 0; i < count; i++) {
    const server = http.createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const at = performance.now();
        res.writeHead(204).end();
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
          id: string;
          data?: { orgId?: string; deal?: { orgId?: string } };
        };
        if ((body.data?.orgId ?? body.data?.deal?.orgId) !== orgOf(i)) wrongOrg++;
        perReceiver[i] = (perReceiver[i] ?? 0) + 1;
        const a = { id: body.id, at };
        arrivals.push(a);
        onArrival?.(a);
      });
    });
    ports.push(await listenInRange(server, firstPort + i));
    servers.push(server);
  }
  return {
    arrivals,
    perReceiver,
    wrongOrg: () => wrongOrg,
    url: (i: number) => `http://127.0.0.1:${ports[i]}/hook`,
    watch(fn: ((a: Arrival) => void) | undefined) {
      onArrival = fn;
    },
    close: () =>
      Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((r) => {
              s.closeAllConnections();
              s.close(() => r());
            }),
        ),
      ),
  };
}

const secretOf = (i: number) => `whsec_${Buffer.from(`bench-events-secret-${i}-0123456789ab`).toString("base64")}`;

/** Subscriptions of `orgs[i]` to receivers[i], written as the API would (one per org, v2). */
async function insertSubscriptions(db: Db, urls: string[], orgOf: (i: number) => string): Promise<string[]> {
  const ids: string[] = [];
  for (const [i, url] of urls.entries()) {
    const id = `whsub_bench${run}${i}`;
    const origin = new URL(url);
    await db.query(
      `INSERT INTO webhooks.org_subscription_counts (org_id, subscriptions) VALUES ($1, 1) ON CONFLICT DO NOTHING`,
      [orgOf(i)],
    );
    await db.query(
      `INSERT INTO webhooks.subscriptions (id, org_id, endpoint_url, events, enabled, payload_version, secret,
         created_at, updated_at, endpoint_origin)
       VALUES ($1, $2, $3, $4, true, 'v2', $5, now(), now(), $6)`,
      [id, orgOf(i), url, ["revenue.deal.created", "revenue.deal.updated"], secretOf(i), `http://${origin.host}`],
    );
    ids.push(id);
  }
  return ids;
}

const deliveryEnv = (url: string, extra: Record<string, string>) => ({
  DATABASE_URL: url,
  WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
  WEBHOOKS_CONCURRENCY: values.concurrency,
  WEBHOOKS_CONSUMER_GROUP: `bench-events-${run}`,
  ...extra,
});

// ---------------------------------------------------------------- drain

async function drain(endpoints: number, cap: number): Promise<void> {
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

// ---------------------------------------------------------------- relay: commit → Kafka

async function relayLatency(): Promise<void> {
  const url = await freshDatabase(`${prefix}bench_relay`);
  const db = openPg({ url, schema: "bench" });
  await migrate(db, [kitMigrations]);
  const topic = `bench.relay.${run}`;
  const bus = new KafkaBus({ brokers: KAFKA_BROKERS.split(","), clientId: "bench-relay", logger });
  const consumerBus = new KafkaBus({ brokers: KAFKA_BROKERS.split(","), clientId: "bench-relay-consumer", logger });
  const committedAt = new Map<string, number>();
  const latencies: number[] = [];
  let expected = 0;
  let allArrived: () => void = () => {};
  const arrivedAll = new Promise<void>((r) => {
    allArrived = r;
  });
  const sub = await consumerBus.subscribe({
    groupId: `bench-relay-${run}`,
    topics: [topic],
    fromBeginning: true,
    handler: async (m) => {
      const at = performance.now();
      const id = m.headers.ce_id ?? "";
      const c = committedAt.get(id);
      if (c !== undefined) latencies.push(at - c);
      if (latencies.length >= expected && expected > 0) allArrived();
    },
  });
  const relay = startOutboxRelay({ db, bus, logger });
  // Warm-up: the producer connects and the topic exists before the measured events.
  await db.tx((q) => enqueueEvent(q, "bench", { topic, key: "warm", type: "bench.warm", source: "bench", data: {} }));
  relay.notify();
  await sleep(3000);
  const total = rate * seconds;
  expected = total;
  const start = performance.now() + 50;
  const sends: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    sends.push(
      (async () => {
        const id = await db.tx((q) =>
          enqueueEvent(q, "bench", { topic, key: `org_${i % 10}`, type: "bench.tick", source: "bench", data: { i } }),
        );
        committedAt.set(id, performance.now());
        // What every service does after a commit (onCommit).
        relay.notify();
      })(),
    );
  }
  await Promise.all(sends);
  await Promise.race([arrivedAll, sleep(20_000)]);
  latencies.sort((a, b) => a - b);
  report(
    `commit → Kafka at ${rate}/s for ${seconds} s (open loop, one outbox row per transaction): ${latencies.length}/${total} arrived; ` +
      `p50 **${fmt(pct(latencies, 50))} ms**, p99 **${fmt(pct(latencies, 99))} ms**, max ${fmt(latencies.at(-1) ?? Number.NaN)} ms`,
  );
  await relay.stop();
  await sub.close();
  await consumerBus.close();
  await bus.close();
  await db.close();
}

// ---------------------------------------------------------------- idle CPU

async function idleCpu(): Promise<void> {
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

async function restart(): Promise<void> {
  const url = await freshDatabase(`${prefix}bench_wh_restart`);
  const db = openPg({ url, schema: "webhooks" });
  await migrate(db, [kitMigrations, webhooksMigrations]);
  const orgOf = () => "org_bench_restart";
  const receivers = await startReceivers(1, portBase + 150, orgOf);
  await insertSubscriptions(db, [receivers.url(0)], orgOf);
  const bus = new KafkaBus({ brokers: KAFKA_BROKERS.split(","), clientId: "bench-restart", logger });
  let n = 0;
  let publishing = true;
  // Events keep coming, 20 a second, throughout.
  const publisher = (async () => {
    while (publishing) {
      const id = `evt_restart_${run}_${n++}`;
      const envelope = {
        id,
        type: "revenue.deal.created",
        source: "revenue",
        time: new Date().toISOString(),
        data: { orgId: orgOf(), deal: { id: `deal_${n}`, name: "Restart" } },
      };
      await bus.publish("platform.revenue.v1", [toBusMessage(envelope, orgOf())]).catch(() => {});
      await sleep(50);
    }
  })();
  const port = portBase + 30;
  const env = deliveryEnv(url, { DELIVERY_PORT: String(port), PORT: String(port + 1) });
  const entry = "services/webhooks/src/delivery-main.ts";
  let worker = await startProc("webhooks-delivery-restart", entry, env, port);
  const firstAfter = async (since: number) => {
    for (;;) {
      const hit = receivers.arrivals.find((a) => a.at > since);
      if (hit) return hit.at;
      await sleep(5);
    }
  };
  await firstAfter(worker.readyAt);
  for (const signal of ["SIGTERM", "SIGKILL", "SIGTERM"] as const) {
    await sleep(2000);
    await worker.stop(signal);
    const down = performance.now();
    await sleep(1000);
    worker = await startProc("webhooks-delivery-restart", entry, env, port);
    const first = await Promise.race([firstAfter(worker.startedAt), sleep(90_000).then(() => Number.NaN)]);
    report(
      `restart after ${signal === "SIGTERM" ? "a graceful stop (SIGTERM)" : "kill -9"}: first delivery ` +
        `**${((first - worker.startedAt) / 1000).toFixed(2)} s** after the process started ` +
        `(${((first - worker.readyAt) / 1000).toFixed(2)} s after it listened; process start-up ` +
        `${((worker.readyAt - worker.startedAt) / 1000).toFixed(2)} s; ${((first - down) / 1000).toFixed(2)} s after the old one stopped)`,
    );
  }
  publishing = false;
  await publisher;
  // Nothing lost: every event published reaches the receiver (at least once).
  const published = n;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && new Set(receivers.arrivals.map((a) => a.id)).size < published) await sleep(200);
  const got = new Set(receivers.arrivals.map((a) => a.id)).size;
  report(
    `restart: ${got}/${published} events delivered after the three restarts (duplicates ${receivers.arrivals.length - got}), wrong-org ${receivers.wrongOrg()}`,
  );
  await worker.stop();
  await bus.close();
  await receivers.close();
  await db.close();
}

// ---------------------------------------------------------------- API response → receiver

/** A port of the bench's range nothing listens on now, from `from` up. */
async function freePort(from: number): Promise<number> {
  const probe = http.createServer();
  const port = await listenInRange(probe, from);
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

async function apiLatency(): Promise<void> {
  let next = portBase + 40;
  const port = async () => {
    const p = await freePort(next);
    next = p + 1;
    return p;
  };
  const p = {
    identity: await port(),
    admin: await port(),
    crm: await port(),
    crmAdmin: await port(),
    revenue: await port(),
    revenueAdmin: await port(),
    webhooks: await port(),
    delivery: await port(),
    gateway: await port(),
  };
  const seed = `bench-events-${run}`;
  const dbs = {
    identity: await freshDatabase(`${prefix}bench_identity`),
    crm: await freshDatabase(`${prefix}bench_crm`),
    revenue: await freshDatabase(`${prefix}bench_revenue`),
    webhooks: await freshDatabase(`${prefix}bench_webhooks`),
  };
  const common = { SANDBOX_SEED: seed };
  const local = (port: number) => `http://127.0.0.1:${port}`;
  await startProc(
    "identity",
    "services/identity/src/main.ts",
    {
      ...common,
      DATABASE_URL: dbs.identity,
      PORT: String(p.identity),
      ADMIN_PORT: String(p.admin),
      PLATFORM_ADMIN_SECRET: ADMIN_SECRET,
    },
    p.admin,
  );
  await startProc(
    "crm-data",
    "services/crm-data/src/main.ts",
    {
      ...common,
      DATABASE_URL: dbs.crm,
      PORT: String(p.crm),
      ADMIN_PORT: String(p.crmAdmin),
      PLATFORM_ADMIN_SECRET: ADMIN_SECRET,
    },
    p.crm,
  );
  await startProc(
    "revenue",
    "services/revenue/src/main.ts",
    {
      ...common,
      DATABASE_URL: dbs.revenue,
      PORT: String(p.revenue),
      ADMIN_PORT: String(p.revenueAdmin),
      PLATFORM_ADMIN_SECRET: ADMIN_SECRET,
      CRM_URL: local(p.crm),
      IDENTITY_URL: local(p.identity),
    },
    p.revenue,
  );
  const whEnv = deliveryEnv(dbs.webhooks, { ...common, PORT: String(p.webhooks), DELIVERY_PORT: String(p.delivery) });
  await startProc("webhooks", "services/webhooks/src/main.ts", whEnv, p.webhooks);
  await startProc("webhooks-delivery-latency", "services/webhooks/src/delivery-main.ts", whEnv, p.delivery);
  await startProc(
    "gateway",
    "gateway/src/main.ts",
    {
      PORT: String(p.gateway),
      HOST: "127.0.0.1",
      METRICS_PORT: "0",
      IDENTITY_URL: local(p.identity),
      CRM_URL: local(p.crm),
      REVENUE_URL: local(p.revenue),
      WEBHOOKS_URL: local(p.webhooks),
    },
    p.gateway,
  );
  const admin = createClient(
    IdentityAdminService,
    httpTransport(local(p.admin), [adminClientInterceptor(ADMIN_SECRET)]),
  );
  const orgs = await admin.listOrganizations({});
  const acme = orgs.organizations.find((o) => o.name === "Acme Corp")?.id ?? "";
  const total = rate * seconds;
  // Writes are limited to 20 a minute per token: enough tokens that none is refused.
  const keys: string[] = [];
  for (let i = 0; i < Math.ceil(total / 15) + 2; i++) {
    keys.push(
      (
        await admin.createToken({
          orgId: acme,
          name: `bench-${i}`,
          scopes: ["deals:read", "deals:write", "webhooks:write"],
        })
      ).key,
    );
  }
  const api = (method: string, path: string, key: string, body?: unknown) =>
    fetch(`${local(p.gateway)}/api/v1alpha1${path}`, {
      method,
      headers: {
        "X-Platform-Api-Key": key,
        "content-type": "application/json",
        "idempotency-key": `${run}-${Math.random().toString(36).slice(2)}`,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const deals = (await (await api("GET", "/deals?limit=20", keys[0] as string)).json()) as {
    items: { id: string; stage?: string }[];
  };
  await sleep(3000);
  const responded = new Map<string, { scheduled: number; response: number }>();
  const fromResponse: number[] = [];
  const fromSchedule: number[] = [];
  const responseTimes: number[] = [];
  let errors = 0;
  const sends: Promise<void>[] = [];
  const arrivalsByName = new Map<string, number>();
  const receiverNames = startNameCapture(arrivalsByName, acme);
  const namesPort = await listenInRange(receiverNames.server, portBase + 161);
  const sub = await api("POST", "/webhook-subscriptions", keys[0] as string, {
    endpointUrl: `http://127.0.0.1:${namesPort}/names`,
    events: ["revenue.deal.updated"],
  });
  if (sub.status !== 201) throw new Error(`subscription: ${sub.status} ${await sub.text()}`);
  // Warm-up: one PATCH per deal, discarded; closed deals (409 deal-closed) are left out.
  const open: string[] = [];
  const warmNames: string[] = [];
  for (const [i, d] of deals.items.entries()) {
    const r = await api("PATCH", `/deals/${d.id}`, keys[(i + 1) % keys.length] as string, { name: `Warm ${run} ${i}` });
    await r.arrayBuffer();
    if (r.status === 200) {
      open.push(d.id);
      warmNames.push(`Warm ${run} ${i}`);
    } else if (r.status !== 409) throw new Error(`PATCH /deals: ${r.status}`);
  }
  if (open.length === 0) throw new Error("the sandbox has no open deal");
  // The delivery's consumer group starts at the topic's beginning: wait until it has caught up
  // with what earlier runs left there (the warm-up's webhooks arrived) before measuring.
  const caughtUp = Date.now() + 180_000;
  while (Date.now() < caughtUp && !warmNames.every((n) => arrivalsByName.has(n))) await sleep(200);
  report(
    `latency: the delivery caught up ${warmNames.every((n) => arrivalsByName.has(n)) ? "" : "NOT "}before the measurement`,
  );
  const start = performance.now() + 100;
  for (let i = 0; i < total; i++) {
    const scheduled = start + (i * 1000) / rate;
    const wait = scheduled - performance.now();
    if (wait > 0) await sleep(wait);
    const name = `Bench ${run} ${i}`;
    const key = keys[i % keys.length] as string;
    const deal = open[i % open.length] as string;
    sends.push(
      api("PATCH", `/deals/${deal}`, key, { name }).then(
        async (res) => {
          const response = performance.now();
          await res.arrayBuffer();
          if (res.status !== 200) errors++;
          responseTimes.push(response - scheduled);
          responded.set(name, { scheduled, response });
        },
        () => {
          errors++;
        },
      ),
    );
  }
  await Promise.all(sends);
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && arrivalsByName.size < total - errors) await sleep(100);
  for (const [name, at] of arrivalsByName) {
    const r = responded.get(name);
    if (!r) continue;
    fromResponse.push(at - r.response);
    fromSchedule.push(at - r.scheduled);
  }
  for (const list of [fromResponse, fromSchedule, responseTimes]) list.sort((a, b) => a - b);
  report(
    `API → receiver, PATCH /deals at ${rate}/s for ${seconds} s (open loop; ${errors} errors): ` +
      `${fromResponse.length}/${total} webhooks matched, wrong-org ${receiverNames.wrongOrg()}; API response → receiver p50 **${fmt(pct(fromResponse, 50))} ms**, ` +
      `p99 **${fmt(pct(fromResponse, 99))} ms**; scheduled send → receiver p50 ${fmt(pct(fromSchedule, 50))} ms, ` +
      `p99 ${fmt(pct(fromSchedule, 99))} ms; API response time (from schedule) p50 ${fmt(pct(responseTimes, 50))} ms, ` +
      `p99 ${fmt(pct(responseTimes, 99))} ms`,
  );
  await receiverNames.close();
  for (const proc of [...procs].reverse()) await proc.stop();
}

/** A receiver that records when each deal.updated webhook arrived, by the deal's name. */
function startNameCapture(into: Map<string, number>, orgId: string) {
  let wrongOrg = 0;
  const server = http.createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = performance.now();
      res.writeHead(204).end();
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        data?: { deal?: { name?: string; orgId?: string } };
      };
      if (body.data?.deal?.orgId !== orgId) wrongOrg++;
      const name = body.data?.deal?.name;
      if (name && !into.has(name)) into.set(name, at);
    });
  });
  return {
    server,
    wrongOrg: () => wrongOrg,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

// ---------------------------------------------------------------- analytics

/**
 * Analytics on the real Postgres: ingestion rate (the ingestion function in batches, raw events
 * and every rollup in one transaction per batch) and the summary's database time for an org
 * with --small events beside one with --events, in the same database and run.
 */
async function analytics(): Promise<void> {
  const url = await freshDatabase(`${prefix}bench_analytics`);
  const db = openPg({ url, schema: ANALYTICS_SCHEMA });
  await migrate(db, [kitMigrations, analyticsMigrations]);
  const now = new Date();
  const load = async (orgId: string, events: number) => {
    const options: GenerateOptions = {
      orgId,
      emails: Math.ceil(events / 2),
      days: 30,
      blasts: 20,
      seed: "bench",
      now,
      senders: [{ userId: newId("usr_"), displayName: "Bench" }],
      maxEvents: events,
    };
    const started = performance.now();
    let loaded = 0;
    let batch: EmailEvent[] = [];
    const flush = async () => {
      await db.tx((q) => ingestEvents(q, batch));
      loaded += batch.length;
      batch = [];
      process.stderr.write(
        `\r${orgId}: ${loaded} events (${(loaded / ((performance.now() - started) / 1000)).toFixed(0)}/s)`,
      );
    };
    for (const e of generateEmailEvents(options, [])) {
      batch.push(emailEventOf(e));
      if (batch.length >= 10_000) await flush();
    }
    if (batch.length > 0) await flush();
    process.stderr.write("\n");
    return loaded / ((performance.now() - started) / 1000);
  };
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

// ---------------------------------------------------------------- main

const load = () => {
  try {
    return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  } catch {
    return "?";
  }
};
report(`node ${process.version}, Kafka ${KAFKA_BROKERS}, load average at start ${load()}`);
try {
  if (phases.has("drain") || phases.has("drain1")) await drain(1, Number(values.cap));
  if (phases.has("drain") || phases.has("drain20")) await drain(20, Number(values.caps20));
  if (phases.has("relay")) await relayLatency();
  if (phases.has("idle")) await idleCpu();
  if (phases.has("restart")) await restart();
  if (phases.has("latency")) await apiLatency();
  if (phases.has("analytics")) await analytics();
} catch (err) {
  for (const proc of procs)
    process.stderr.write(`--- ${proc.name} (exit ${proc.child.exitCode}):\n${proc.log().slice(-3000)}\n`);
  throw err;
} finally {
  for (const proc of [...procs]) await proc.stop();
  await dropDatabases();
}
report(`load average at end ${load()}`);
console.log(`\n${results.map((r) => `- ${r}`).join("\n")}\n`);
