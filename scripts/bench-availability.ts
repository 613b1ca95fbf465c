import { parseArgs } from "node:util";
import { createClient } from "@connectrpc/connect";
import { Health } from "@platform/contracts/health";
import { IdentityAdminService } from "@platform/contracts/identity";
import { systemClock } from "@platform/kit/clock";
import { adminClientInterceptor, httpTransport } from "@platform/kit/connect";
import { openPg } from "@platform/kit/db";
import { newId } from "@platform/kit/ids";
import { seedBenchSchedule } from "@platform/scheduling/server";
import autocannon from "autocannon";
import { cpuMsOf, scrapeRuntime, stackPid } from "./bench-support.js";

const { values } = parseArgs({
  options: {
    suite: { type: "string" },
    duration: { type: "string", default: "5" },
    connections: { type: "string", default: "2" },
    "warm-up": { type: "string", default: "2" },
    tokens: { type: "string", default: "500" },
    hosts: { type: "string", default: "1,5,20" },
    days: { type: "string", default: "1,7,30,window" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log(
    "usage: npm run bench -- --suite availability [--duration SECONDS] [--connections N] [--tokens N per org]\n" +
      "         [--warm-up SECONDS per case]\n" +
      "         [--hosts 1,5,20] [--days 1,7,30,window]\n" +
      "Needs a running stack (bash scripts/stack.sh start) and the same *_PORT, PG_URL, STACK_DB_PREFIX and\n" +
      "STACK_RUN_DIR variables it was started with.",
  );
  process.exit(0);
}
const duration = Number(values.duration);
const connections = Number(values.connections);
const warmUpSeconds = Number(values["warm-up"]);
const tokensPerOrg = Number(values.tokens);
const hostCounts = values.hosts.split(",").map(Number);
const dayCounts = values.days.split(",").map((d) => (d === "window" ? "window" : Number(d)));

const env = process.env;
const port = (name: string, fallback: number) => Number(env[name] ?? fallback);
const gatewayUrl = `http://127.0.0.1:${port("GATEWAY_PORT", 8080)}`;
const adminUrl = `http://127.0.0.1:${port("ADMIN_PORT", 8081)}`;
const schedulingUrl = `http://127.0.0.1:${port("SCHEDULING_PORT", 7102)}`;
const schedulingMetricsUrl = `http://127.0.0.1:${port("METRICS_BASE_PORT", 9460) + 2}/metrics`;
const runDir = env.STACK_RUN_DIR ?? ".run";
const schedulingDbUrl = `${env.PG_URL ?? "postgres://postgres@127.0.0.1:5432"}/${env.STACK_DB_PREFIX ?? "platform_"}scheduling`;
const adminSecret = env.PLATFORM_ADMIN_SECRET ?? "dev-admin-secret-change-me";

// stack.sh writes its supervisor's pid to <name>.pid and the process it runs to <name>.child.
const pidOf = (name: string) => {
  const pid = stackPid(runDir, name, "child");
  if (pid === undefined) throw new Error(`no running ${name} in ${runDir} (${name}.child)`);
  return pid;
};
const schedulingPid = pidOf("scheduling");
const gatewayPid = pidOf("gateway");

/** The event-loop delay maximum scheduling exports since the last scrape (ms), if it exports one. */
async function scrapeLoopDelayMs(): Promise<number | undefined> {
  const seconds = (await scrapeRuntime(schedulingMetricsUrl))?.loopDelayMaxSeconds;
  return seconds === undefined ? undefined : seconds * 1000;
}

const admin = createClient(IdentityAdminService, httpTransport(adminUrl, [adminClientInterceptor(adminSecret)]));
const health = createClient(Health, httpTransport(schedulingUrl));

/** Health/Check every 10 ms straight to scheduling until stopped; the slowest answer bounds a stall. */
function probeLoop() {
  let running = true;
  let worst = 0;
  const done = (async () => {
    while (running) {
      const t0 = performance.now();
      await health.check({ service: "" });
      worst = Math.max(worst, performance.now() - t0);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return async () => {
    running = false;
    await done;
    return worst;
  };
}

// One org per host count, always the same one (seedBenchSchedule derives the schedule's id
// from its org and keeps a schedule it finds): 1, 5 and 20 hosts take the first three orgs.
const orgs = (await admin.listOrganizations({})).organizations;
const orgIndex = (hosts: number, i: number) => [1, 5, 20].indexOf(hosts) + 1 || 3 + i;
const db = openPg({ url: schedulingDbUrl, schema: "scheduling", max: 2 });
interface Setup {
  hosts: number;
  scheduleId: string;
  body: Record<string, unknown>;
  keys: string[];
}
const setups: Setup[] = [];
for (const [i, hosts] of hostCounts.entries()) {
  const org = orgs[orgIndex(hosts, i) - 1];
  if (!org) throw new Error(`the stack has ${orgs.length} orgs; ${hosts} hosts need org ${orgIndex(hosts, i)}`);
  const orgId = org.id;
  const bench = await seedBenchSchedule(db, { orgId, hostCount: hosts, clock: systemClock });
  process.stderr.write(`issuing ${tokensPerOrg} tokens for ${orgId} (${hosts} hosts)…\n`);
  const keys: string[] = [];
  for (let t = 0; t < tokensPerOrg; t++) {
    const { key } = await admin.createToken({ orgId, name: `bench-avail-${t}`, scopes: ["smart-scheduling:read"] });
    keys.push(key);
  }
  setups.push({ hosts, scheduleId: bench.scheduleId, body: { formValues: bench.formValues }, keys });
}
await db.close();

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
// Ranges start at the next full hour two hours ahead: past the schedule's 60-minute minimum advance.
const rangeStart = new Date(Math.ceil((Date.now() + 2 * HOUR_MS) / HOUR_MS) * HOUR_MS);

interface Row {
  hosts: number;
  days: number | "window";
  slots: number;
  bytes: number;
  requests: number;
  p50: number;
  p99: number;
  cpuPerRequest: number;
  cpuPerSlotUs: number;
  gatewayCpuPerRequest: number;
  probeMax: number;
  loopDelayMax: number | undefined;
}

async function runCase(setup: Setup, days: number | "window"): Promise<Row> {
  const body = JSON.stringify(
    days === "window"
      ? setup.body
      : {
          ...setup.body,
          dateRange: {
            start: rangeStart.toISOString(),
            end: new Date(rangeStart.getTime() + days * DAY_MS).toISOString(),
          },
        },
  );
  const url = `${gatewayUrl}/api/v1alpha1/smart-schedules/${setup.scheduleId}/availability`;
  let next = 0;
  const headers = () => ({
    "X-Platform-Api-Key": setup.keys[next++ % setup.keys.length]!,
    "Content-Type": "application/json",
  });
  const probe = await fetch(url, { method: "POST", headers: headers(), body });
  const text = await probe.text();
  if (probe.status !== 200) throw new Error(`probe ${probe.status}: ${text.slice(0, 300)}`);
  const parsed = JSON.parse(text) as { hostGroups: { slots: unknown[] }[][] };
  const slots = parsed.hostGroups.flat().reduce((n, h) => n + h.slots.length, 0);
  // Warm-up: lets V8 optimise and fills the gateway's token cache; its figures are discarded.
  const warmUntil = performance.now() + warmUpSeconds * 1000;
  for (let i = 0; i < 5 || performance.now() < warmUntil; i++) {
    await fetch(url, { method: "POST", headers: headers(), body }).then((r) => r.text());
  }

  await scrapeLoopDelayMs(); // resets the exported maximum
  const stopProbe = probeLoop();
  const cpu0 = cpuMsOf(schedulingPid);
  const gw0 = cpuMsOf(gatewayPid);
  const t0 = performance.now();
  const r = await autocannon({
    url,
    connections,
    duration,
    requests: [
      {
        method: "POST",
        body,
        setupRequest: (req) => ({ ...req, headers: { ...req.headers, ...headers() } }),
      },
    ],
  });
  const cpu = cpuMsOf(schedulingPid) - cpu0 - (idleCpuPerSecond * (performance.now() - t0)) / 1000;
  const gwCpu = cpuMsOf(gatewayPid) - gw0 - (gatewayIdleCpuPerSecond * (performance.now() - t0)) / 1000;
  const probeMax = await stopProbe();
  const loopDelayMax = await scrapeLoopDelayMs();
  if (r.non2xx > 0 || r.errors > 0) {
    throw new Error(`${setup.hosts} hosts × ${days}: ${r.non2xx} non-2xx, ${r.errors} errors (429s: raise --tokens)`);
  }
  const requests = r.requests.total;
  return {
    hosts: setup.hosts,
    days,
    slots,
    bytes: Buffer.byteLength(text),
    requests,
    p50: r.latency.p50,
    p99: r.latency.p99,
    cpuPerRequest: cpu / requests,
    cpuPerSlotUs: slots > 0 ? (cpu * 1000) / (requests * slots) : Number.NaN,
    gatewayCpuPerRequest: gwCpu / requests,
    probeMax,
    loopDelayMax,
  };
}

// Scheduling and the gateway spend CPU while idle too (outbox relay polls, Kafka heartbeats,
// metrics); the rates are measured first and taken off each case's CPU, so the figures are
// availability's.
const IDLE_SECONDS = 5;
process.stderr.write(`measuring scheduling's idle CPU for ${IDLE_SECONDS}s…\n`);
const idle0 = cpuMsOf(schedulingPid);
const gatewayIdle0 = cpuMsOf(gatewayPid);
await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
const idleCpuPerSecond = (cpuMsOf(schedulingPid) - idle0) / IDLE_SECONDS;
const gatewayIdleCpuPerSecond = (cpuMsOf(gatewayPid) - gatewayIdle0) / IDLE_SECONDS;

const rows: Row[] = [];
for (const setup of setups) {
  for (const days of dayCounts) {
    process.stderr.write(`running ${setup.hosts} hosts × ${days === "window" ? "whole window" : `${days} days`}…\n`);
    rows.push(await runCase(setup, days));
  }
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(bytes < 1e5 ? 4 : 2);
console.log(
  "\n| hosts × days | slots | bytes (MB) | req | p50 ms | p99 ms | scheduling CPU ms/req | scheduling CPU µs/slot | gateway CPU ms/req | probe max ms | loop delay max ms |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|");
for (const r of rows) {
  console.log(
    `| ${r.hosts} × ${r.days === "window" ? "window" : r.days} | ${r.slots} | ${mb(r.bytes)} | ${r.requests} | ${r.p50} | ${r.p99} | ${r.cpuPerRequest.toFixed(1)} | ${Number.isNaN(r.cpuPerSlotUs) ? "–" : r.cpuPerSlotUs.toFixed(2)} | ${r.gatewayCpuPerRequest.toFixed(1)} | ${r.probeMax.toFixed(0)} | ${r.loopDelayMax === undefined ? "n/a" : r.loopDelayMax.toFixed(0)} |`,
  );
}
console.log(
  `\nnode ${process.version}, ${connections} connections, ${duration}s per case (after ${warmUpSeconds}s of warm-up), gateway ${gatewayUrl}, ` +
    `range start ${rangeStart.toISOString()}; CPU net of idle (scheduling ${idleCpuPerSecond.toFixed(0)} ms/s, gateway ${gatewayIdleCpuPerSecond.toFixed(0)} ms/s)`,
);

// The longest piece of work that holds an event loop, in CPU time (so that the figure is the
// code's own and not the time the machine's other processes kept it off a core): the same
// steps as scheduling's handler and the gateway's mapping, run here in-process for 20 hosts
// of the bench schedule's zones and hours over 30 days. Imported here, so that the stack
// part of the bench also runs against code from before these functions existed.
try {
  const { create, toBinary } = await import("@bufbuild/protobuf");
  const { timestampFromDate } = await import("@bufbuild/protobuf/wkt");
  const { GetAvailabilityResponseSchema } = await import("@platform/contracts/scheduling");
  const { availabilityBody } = await import("@platform/gateway/mapping/availability-body");
  const { slotStarts, slotTokenSigner, SLOTS_PER_TURN, SLOT_TOKEN_TAIL_BYTES, hostGroupMessage } = await import(
    "@platform/scheduling/bench"
  );
  type HostAvailability = import("@platform/scheduling/bench").HostAvailability;
  const zones = ["America/New_York", "Europe/Berlin", "Asia/Kolkata", "Australia/Sydney", "America/Los_Angeles"];
  const hosts = Array.from({ length: 20 }, (_, i) => ({
    userId: newId("usr_"),
    orgId: "org_bench",
    email: `bench.host${i}@bench.example`,
    firstName: "Bench",
    lastName: `Host ${i}`,
    displayName: `Bench Host ${i}`,
    timeZone: zones[i % zones.length]!,
    workingHours: ([1, 2, 3, 4, 5, 6, 7] as const).map((weekday) => ({ weekday, start: "08:00", end: "18:00" })),
  }));
  const range = { start: rangeStart, end: new Date(rangeStart.getTime() + 30 * DAY_MS) };
  const cpuOf = <T>(fn: () => T): [T, number] => {
    const c0 = process.cpuUsage();
    const value = fn();
    const c = process.cpuUsage(c0);
    return [value, (c.user + c.system) / 1000];
  };
  const turns = { turn: [] as number[], encode: [] as number[], gateway: [] as number[] };
  // The first 5 rounds warm V8 up (an unoptimised SHA-256 is many times slower) and are not counted.
  const WARM_ROUNDS = 5;
  for (let round = 0; round < WARM_ROUNDS + 20; round++) {
    const record = (what: keyof typeof turns, ms: number) => {
      if (round >= WARM_ROUNDS) turns[what].push(ms);
    };
    const signer = slotTokenSigner("bench-secret", {
      orgId: newId("org_"),
      scheduleId: newId("sched_"),
      expiresAt: new Date(Date.now() + 600_000),
      preview: false,
      durationMinutes: 30,
      formValuesHash: "bench",
    });
    // Turns as matchHosts takes them: slot generation and signing until SLOTS_PER_TURN slots.
    const group: HostAvailability[] = [];
    let turn = process.cpuUsage();
    let sinceYield = 0;
    const endTurn = () => {
      const c = process.cpuUsage(turn);
      record("turn", (c.user + c.system) / 1000);
      turn = process.cpuUsage();
      sinceYield = 0;
    };
    for (const host of hosts) {
      const starts = slotStarts({ host: { ...host, busy: [] }, range, durationMinutes: 30, stepMinutes: 30 });
      const tokenTails = Buffer.allocUnsafe(starts.length * SLOT_TOKEN_TAIL_BYTES);
      for (let from = 0; from < starts.length; from += SLOTS_PER_TURN) {
        const to = Math.min(starts.length, from + SLOTS_PER_TURN);
        if (sinceYield + (to - from) > SLOTS_PER_TURN) endTurn();
        signer.signTails(host.userId, starts, from, to, tokenTails);
        sinceYield += to - from;
      }
      group.push({ host, starts, durationMinutes: 30, tokenHead: signer.head(host.userId), tokenTails });
    }
    endTurn();
    const answer = () =>
      create(GetAvailabilityResponseSchema, {
        hostGroups: [hostGroupMessage(group, "parts")],
        matchTime: timestampFromDate(new Date()),
      });
    const [bytes, encode] = cpuOf(() => toBinary(GetAvailabilityResponseSchema, answer()));
    record("encode", encode);
    const decoded = answer();
    const [, gateway] = cpuOf(() => availabilityBody(decoded));
    record("gateway", gateway);
    if (round === 0) process.stderr.write(`in-process turns: ${bytes.length} bytes of protobuf per answer\n`);
  }
  const p50max = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return `${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} / ${sorted.at(-1)!.toFixed(1)}`;
  };
  console.log(
    "\nSynchronous turns, CPU ms p50 / max (20 hosts × 30 days in-process, 20 rounds after 5 of warm-up):\n" +
      `| one turn of availability (slots generated and signed, up to ${SLOTS_PER_TURN}) | encoding the answer (scheduling) | the gateway's JSON |\n` +
      "|---|---|---|\n" +
      `| ${p50max(turns.turn)} | ${p50max(turns.encode)} | ${p50max(turns.gateway)} |`,
  );
} catch (err) {
  console.log(`\n(no in-process turns: the code under test predates them: ${String(err).split("\n")[0]})`);
}
