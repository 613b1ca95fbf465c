import http from "node:http";
import { createClient } from "@connectrpc/connect";
import { IdentityAdminService } from "@platform/contracts/identity";
import { adminClientInterceptor, httpTransport } from "@platform/kit/connect";
import { TOPICS } from "@platform/kit/events";
import { cpuMs, machineTicks, pct, pidsNamed, sleep } from "../bench-support.js";
import {
  ADMIN_SECRET,
  fmt,
  freshDatabase,
  portBase,
  prefix,
  procs,
  rate,
  report,
  run,
  seconds,
  startProc,
  warmupSeconds,
  withKafkaAdmin,
} from "./context.js";
import { deliveryEnv, jsonReceiver, listenInRange } from "./receivers.js";

// ---------------------------------------------------------------- API response → receiver

/** A port of the bench's range nothing listens on now, from `from` up. */
export async function freePort(from: number): Promise<number> {
  const probe = http.createServer();
  const port = await listenInRange(probe, from);
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

export async function apiLatency(): Promise<void> {
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
  // Writes are limited to 20 a minute per token: enough tokens that none is refused (the
  // warm-up at rate and the measurement use them in turn).
  const keys: string[] = [];
  for (let i = 0; i < Math.ceil((total + rate * warmupSeconds) / 15) + 2; i++) {
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
  // node:http with keep-alive sockets rather than fetch: the load generator shares the two cores
  // with what it measures, and fetch costs it several times the CPU per request.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const api = (method: string, path: string, key: string, body?: unknown) =>
    new Promise<{ status: number; text: () => string; json: () => unknown }>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = http.request(
        `${local(p.gateway)}/api/v1alpha1${path}`,
        {
          method,
          agent,
          headers: {
            "X-Platform-Api-Key": key,
            "idempotency-key": `${run}-${Math.random().toString(36).slice(2)}`,
            ...(payload === undefined
              ? {}
              : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            resolve({ status: res.statusCode ?? 0, text: () => text, json: () => JSON.parse(text) });
          });
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(payload);
    });
  const deals = (await api("GET", "/deals?limit=20", keys[0] as string)).json() as {
    items: { id: string; stage?: string }[];
  };
  await sleep(3000);
  const responded = new Map<string, { scheduled: number; response: number }>();
  const fromResponse: number[] = [];
  const fromSchedule: number[] = [];
  const responseTimes: number[] = [];
  let errors = 0;
  const arrivalsByName = new Map<string, number>();
  const receiverNames = startNameCapture(arrivalsByName, acme);
  const namesPort = await listenInRange(receiverNames.server, portBase + 161);
  const sub = await api("POST", "/webhook-subscriptions", keys[0] as string, {
    endpointUrl: `http://127.0.0.1:${namesPort}/names`,
    events: ["revenue.deal.updated"],
  });
  if (sub.status !== 201) throw new Error(`subscription: ${sub.status} ${sub.text()}`);
  // Warm-up: one PATCH per deal, discarded; closed deals (409 deal-closed) are left out.
  const open: string[] = [];
  const warmNames: string[] = [];
  for (const [i, d] of deals.items.entries()) {
    const r = await api("PATCH", `/deals/${d.id}`, keys[(i + 1) % keys.length] as string, { name: `Warm ${run} ${i}` });
    if (r.status === 200) {
      open.push(d.id);
      warmNames.push(`Warm ${run} ${i}`);
    } else if (r.status !== 409) throw new Error(`PATCH /deals: ${r.status}`);
  }
  if (open.length === 0) throw new Error("the sandbox has no open deal");
  // The delivery's consumer group starts at the topic's beginning: wait until it has caught up
  // with what earlier runs left there (the warm-up's webhooks arrived) before measuring.
  const caughtUp = Date.now() + 300_000;
  while (Date.now() < caughtUp && !warmNames.every((n) => arrivalsByName.has(n))) await sleep(200);
  // The warm-up's partitions are not all of them: the group must have read every partition
  // of both topics to its end, or its catch-up would run during (and weigh on) the measurement.
  const lag = await groupLag(`bench-events-${run}`, [TOPICS.scheduling, TOPICS.revenue], caughtUp);
  report(
    `latency: the delivery caught up ${warmNames.every((n) => arrivalsByName.has(n)) && lag === 0 ? "" : `NOT (lag ${lag}) `}before the measurement`,
  );
  // CPU of every process taking part, per write: where the time of the tail goes.
  const cpuSample = () => {
    const sample = new Map<string, number>();
    for (const proc of procs) if (proc.child.pid) sample.set(proc.name, cpuMs(proc.child.pid) ?? 0);
    for (const [name, comm] of [
      ["postgres", "postgres"],
      ["kafka", "java"],
    ] as const)
      sample.set(
        name,
        pidsNamed(comm).reduce((sum, pid) => sum + (cpuMs(pid) ?? 0), 0),
      );
    const own = process.cpuUsage();
    sample.set("bench (load + receiver)", (own.user + own.system) / 1000);
    return sample;
  };
  /**
   * PATCHes at `rate` a second (open loop: each send at its scheduled time, however long the
   * earlier ones take), `count` of them named `${label} i`, each key and deal in turn.
   */
  const atRate = async (
    count: number,
    label: string,
    answered: (name: string, scheduled: number, res: { status: number } | undefined) => void,
  ) => {
    const sends: Promise<void>[] = [];
    const start = performance.now() + 100;
    for (let i = 0; i < count; i++) {
      const scheduled = start + (i * 1000) / rate;
      const wait = scheduled - performance.now();
      if (wait > 0) await sleep(wait);
      const name = `${label} ${i}`;
      const key = keys[i % keys.length] as string;
      const deal = open[i % open.length] as string;
      sends.push(
        api("PATCH", `/deals/${deal}`, key, { name }).then(
          (res) => answered(name, scheduled, res),
          () => answered(name, scheduled, undefined),
        ),
      );
    }
    await Promise.all(sends);
  };
  // Steady state first: the processes were started for this phase and run JIT-cold code, and
  // their pools and the broker's fetch sessions fill on the first load. Discarded, once its
  // webhooks have arrived.
  const warmup = Math.round(rate * warmupSeconds);
  if (warmup > 0) {
    const names: string[] = [];
    await atRate(warmup, `Warm-rate ${run}`, (name, _scheduled, res) => {
      if (res?.status === 200) names.push(name);
    });
    const until = Date.now() + 30_000;
    while (Date.now() < until && !names.every((n) => arrivalsByName.has(n))) await sleep(100);
  }
  const cpuBefore = cpuSample();
  const ticksBefore = machineTicks();
  await atRate(total, `Bench ${run}`, (name, scheduled, res) => {
    // The whole response has arrived.
    const response = performance.now();
    if (res?.status !== 200) errors++;
    if (!res) return;
    responseTimes.push(response - scheduled);
    responded.set(name, { scheduled, response });
  });
  const deadline = Date.now() + 30_000;
  // Wait for the measured writes' webhooks only (the map also holds the warm-up's names).
  const missing = () => [...responded.keys()].filter((name) => !arrivalsByName.has(name)).length;
  while (Date.now() < deadline && missing() > 0) await sleep(100);
  const cpuAfter = cpuSample();
  const ticksAfter = machineTicks();
  const perWrite = [...cpuAfter]
    .map(([name, ms]) => `${name} ${((ms - (cpuBefore.get(name) ?? 0)) / total).toFixed(2)}`)
    .join(", ");
  const busy = (ticksAfter.busy - ticksBefore.busy) / Math.max(1, ticksAfter.total - ticksBefore.total);
  report(`latency: CPU ms per write: ${perWrite}; the machine's cores ${(busy * 100).toFixed(0)} % busy meanwhile`);
  for (const [name, at] of arrivalsByName) {
    const r = responded.get(name);
    if (!r) continue;
    fromResponse.push(at - r.response);
    fromSchedule.push(at - r.scheduled);
  }
  for (const list of [fromResponse, fromSchedule, responseTimes]) list.sort((a, b) => a - b);
  report(
    `API → receiver, PATCH /deals at ${rate}/s for ${seconds} s after ${warmupSeconds} s of warm-up (open loop; ${errors} errors): ` +
      `${fromResponse.length}/${total} webhooks matched, wrong-org ${receiverNames.wrongOrg()}; API response → receiver p50 **${fmt(pct(fromResponse, 50))} ms**, ` +
      `p99 **${fmt(pct(fromResponse, 99))} ms**; scheduled send → receiver p50 ${fmt(pct(fromSchedule, 50))} ms, ` +
      `p99 ${fmt(pct(fromSchedule, 99))} ms; API response time (from schedule) p50 ${fmt(pct(responseTimes, 50))} ms, ` +
      `p99 ${fmt(pct(responseTimes, 99))} ms`,
  );
  await receiverNames.close();
  for (const proc of [...procs].reverse()) await proc.stop();
}

/** A receiver that records when each deal.updated webhook arrived, by the deal's name. */
export function startNameCapture(into: Map<string, number>, orgId: string) {
  let wrongOrg = 0;
  const server = jsonReceiver((json, at) => {
    const body = json as { data?: { deal?: { name?: string; orgId?: string } } };
    if (body.data?.deal?.orgId !== orgId) wrongOrg++;
    const name = body.data?.deal?.name;
    if (name && !into.has(name)) into.set(name, at);
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

/** Waits until consumer group `groupId` has committed every partition of `topics` to its end; the lag left at `until`. */
async function groupLag(groupId: string, topics: string[], until: number): Promise<number> {
  return withKafkaAdmin("bench-events-lag", async (admin) => {
    for (;;) {
      let lag = 0;
      for (const topic of topics) {
        const ends = await admin.fetchTopicOffsets(topic);
        const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
        for (const end of ends) {
          const at = Number(committed?.partitions.find((c) => c.partition === end.partition)?.offset ?? -1);
          lag += Number(end.high) - (at < 0 ? Number(end.low) : at);
        }
      }
      if (lag === 0 || Date.now() >= until) return lag;
      await sleep(500);
    }
  });
}
