/**
 * npm run bench -- --suite distributed — the request path of the distributed runtime
 * (scripts/stack.sh: every service and the gateway a process of its own), side by side in one
 * run:
 *
 *  - closed loop at 10 and 50 connections: a bare fastify route (its own process) returning
 *    the same JSON, identity's GetOrganization called directly over Connect (kit's client, context
 *    signed per call as the gateway does), the floor proxy (floor-proxy.ts: the gateway's
 *    unavoidable hops on bare node:http, nothing else) and GET /organizations/me through the
 *    gateway;
 *  - open loop: GET /organizations/me sent at an even fixed rate (500, 1,000, 1,500 req/s) to
 *    the floor proxy and to the gateway in turn,
 *    each request's latency measured from the moment it was scheduled, so a stalled server
 *    shows as latency rather than as fewer requests sent (no coordinated omission);
 *  - open loop through the gateway with as many keys it has not seen (--cold-rate, 1,000 req/s):
 *    every key's first request waits for its look-up at identity;
 *  - POST /deals at 1 and 10 connections;
 *  - CPU per request of each process (utime + stime from /proc/<pid>/stat before and after):
 *    the stack's eight, the Postgres backends serving its databases, a local Redis and the
 *    Kafka broker of scripts/kafka.sh, the bench's own servers and the load generator. A
 *    write's event costs the fan-out and Kafka as much as the write costs revenue.
 *
 * On a shared machine the load of others swings within seconds: `--rounds N` runs the closed
 * loop's four targets N times in turn (bare, direct, floor, gateway, bare, …) and reports the median
 * round of each, and the median of the per-round ratios.
 *
 * It uses the stack that answers on GATEWAY_PORT, or starts one (scripts/stack.sh with the same
 * environment) and then stops only what it started. Tokens are issued on identity's admin plane,
 * enough that no token passes the spec's per-minute limits (a 429 fails the run).
 *
 *   npm run bench -- --suite distributed [--duration 10] [--rates 500,1000,1500] [--connections 10,50]
 *     [--tokens 1000] [--rounds 1] [--skip closed,open,cold,deals] [--soak SECONDS] [--soak-rate 1000] [--cold-rate 1000]
 *   environment: GATEWAY_PORT, IDENTITY_PORT, ADMIN_PORT, REDIS_URL, STACK_RUN_DIR, STACK_DB_PREFIX, PG_URL,
 *     PLATFORM_CONTEXT_SECRET, PLATFORM_ADMIN_SECRET (scripts/stack.sh's names and defaults)
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import http from "node:http";
import { createHistogram, type RecordableHistogram } from "node:perf_hooks";
import { createClient } from "@connectrpc/connect";
import { IdentityAdminService, OrganizationService } from "@platform/contracts/identity";
import { systemClock } from "@platform/kit/clock";
import { adminClientInterceptor, httpTransport } from "@platform/kit/connect";
import { CONTEXT_HEADER, signContext } from "@platform/kit/context";
import autocannon from "autocannon";

import {
  ADMIN,
  ADMIN_SECRET,
  API,
  CONTEXT_SECRET,
  coldRate,
  connectionCounts,
  cpuPerRequest,
  duration,
  env,
  GATEWAY,
  IDENTITY,
  log,
  pgPool,
  REDIS_URL,
  rates,
  rounds,
  rpcHttp,
  STACK_NODE,
  STACK_NODE_VERSION,
  sampleCpu,
  sampleServer,
  skip,
  soakRate,
  soakSeconds,
  stopWhatWeStarted,
  tokenCount,
  vacuumIfAutovacuumOff,
} from "./bench-distributed/stack.js";

// ---------------------------------------------------------------- fixtures: tokens and ids

await vacuumIfAutovacuumOff();

const admin = createClient(
  IdentityAdminService,
  httpTransport(ADMIN, [adminClientInterceptor(ADMIN_SECRET)], { unaryHttpVersion: rpcHttp }),
);
const acme = (await admin.listOrganizations({})).organizations.find((o) => o.name === "Acme Corp");
if (!acme) throw new Error("the stack's identity has no Acme Corp (sandbox not seeded?)");
const SCOPES = ["organizations:read", "deals:read", "deals:write", "accounts:read"];
const acmeId = acme.id;
/** Issues `count` tokens on identity's admin plane, 50 at a time. */
async function issueTokens(count: number, label: string): Promise<{ key: string; tokenId: string }[]> {
  log(`issuing ${count} tokens on ${ADMIN}…`);
  const issued: { key: string; tokenId: string }[] = [];
  for (let i = 0; i < count; i += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, count - i) }, (_, j) =>
        admin.createToken({ orgId: acmeId, name: `${label}-${i + j}`, scopes: SCOPES }),
      ),
    );
    for (const t of batch) issued.push({ key: t.key, tokenId: t.token?.id ?? "" });
  }
  return issued;
}
const tokens = await issueTokens(tokenCount, "bench-distributed");
const firstKey = tokens[0]?.key ?? "";
let nextToken = 0;
const nextKey = () => (tokens[nextToken++ % tokens.length] as { key: string }).key;

async function get(path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`${GATEWAY}${API}${path}`, { headers: { "X-Platform-Api-Key": firstKey } });
  return { status: res.status, body: await res.text() };
}

const me = await get("/organizations/me");
if (me.status !== 200) throw new Error(`GET /organizations/me: ${me.status} ${me.body}`);
const deals = JSON.parse((await get("/deals?limit=1")).body) as { items: { account: { id: string }; stage: string }[] };
const sampleDeal = deals.items[0];
if (!sampleDeal) throw new Error("the sandbox has no deal to take an account and stage from");
const dealBody = (n: number) =>
  JSON.stringify({ name: `Bench deal ${n}`, accountId: sampleDeal.account.id, stage: sampleDeal.stage });

// ---------------------------------------------------------------- the bare route, its own process

const bareServer: ChildProcess = spawn(
  STACK_NODE,
  [
    "--input-type=module",
    "-e",
    `import Fastify from "fastify";
const body = process.env.BODY;
const app = Fastify({ logger: false });
app.get("${API}/organizations/me", async (_req, reply) => reply.type("application/json").send(body));
const url = await app.listen({ port: 0, host: "127.0.0.1" });
process.stdout.write(url + "\\n");`,
  ],
  { env: { ...env, BODY: me.body }, stdio: ["ignore", "pipe", "inherit"] },
);
sampleServer("bare", bareServer.pid);

// ---------------------------------------------------------------- the floor proxy, its own process

// The gateway's unavoidable hops and nothing else (floor-proxy.ts): the row the gateway's own
// features are measured against.
const floorServer: ChildProcess = spawn(
  STACK_NODE,
  ["--import", "tsx", new URL("./bench-distributed/floor-proxy.ts", import.meta.url).pathname],
  {
    env: {
      ...env,
      REDIS_URL,
      IDENTITY_URL: IDENTITY,
      PLATFORM_CONTEXT_SECRET: CONTEXT_SECRET,
      ORG_ID: acme.id,
      RPC_HTTP_VERSION: rpcHttp,
    },
    stdio: ["ignore", "pipe", "inherit"],
  },
);
sampleServer("floor", floorServer.pid);

/** The URL a server of the bench's own prints once it listens. */
const listening = (child: ChildProcess, name: string) =>
  new Promise<string>((resolve, reject) => {
    child.stdout?.once("data", (d: Buffer) => resolve(d.toString().trim()));
    child.once("exit", (code) => reject(new Error(`${name} exited with ${code}`)));
  });
const [bareUrl, floorUrl] = await Promise.all([
  listening(bareServer, "the bare fastify route"),
  listening(floorServer, "the floor proxy"),
]);

// ---------------------------------------------------------------- closed loop

interface Row {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  errors: number;
  cpu: Record<string, number>;
}

async function autocannonRow(
  name: string,
  url: string,
  conns: number,
  seconds: number,
  opts: { method?: "GET" | "POST"; body?: (n: number) => string } = {},
): Promise<Row> {
  log(`${name}: ${seconds}s at ${conns} connections…`);
  const before = await sampleCpu();
  let n = 0;
  const r = await autocannon({
    url,
    connections: conns,
    duration: seconds,
    requests: [
      {
        method: opts.method ?? "GET",
        setupRequest: (req) => {
          n++;
          const headers: Record<string, string | string[] | undefined> = {
            ...req.headers,
            "X-Platform-Api-Key": nextKey(),
          };
          if (!opts.body) return { ...req, headers };
          headers["Content-Type"] = "application/json";
          headers["Idempotency-Key"] = `bench-${process.pid}-${Date.now()}-${n}`;
          return { ...req, headers, body: opts.body(n) };
        },
      },
    ],
  });
  const after = await sampleCpu();
  return {
    name,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests.total,
    errors: r.non2xx + r.errors + r.timeouts,
    cpu: cpuPerRequest(before, after, r.requests.total),
  };
}

const organizations = createClient(OrganizationService, httpTransport(IDENTITY, [], { unaryHttpVersion: rpcHttp }));
const apiContext = {
  principal: "api" as const,
  requestId: "bench",
  orgId: acme.id,
  tokenId: tokens[0]?.tokenId ?? "",
  scopes: SCOPES,
};

/** GetOrganization straight to identity: `conns` calls in flight at all times over one HTTP/2 session. */
async function directRow(conns: number, seconds: number): Promise<Row> {
  const name = `identity GetOrganization direct (Connect)`;
  log(`${name}: ${seconds}s at ${conns} concurrent calls…`);
  const histogram = createHistogram();
  let requests = 0;
  let errors = 0;
  const before = await sampleCpu();
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: conns }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        try {
          await organizations.getOrganization(
            { orgId: "" },
            { headers: { [CONTEXT_HEADER]: signContext(apiContext, CONTEXT_SECRET, systemClock) } },
          );
          histogram.record(Math.max(1, Math.round((performance.now() - t0) * 1000)));
          requests++;
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const after = await sampleCpu();
  return {
    name,
    rps: requests / elapsed,
    p50: histogram.percentile(50) / 1000,
    p99: histogram.percentile(99) / 1000,
    requests,
    errors,
    cpu: cpuPerRequest(before, after, requests),
  };
}

// ---------------------------------------------------------------- open loop

/**
 * Sends GET /organizations/me at an even `rate` for `seconds`: request i is due at
 * start + i/rate and its latency runs from that due time to the end of its response, however
 * late the generator or the server made it. Connections come from a keep-alive pool that
 * grows as needed, so a slow response never holds back the next send.
 */
async function openLoopRow(
  target: { name: string; url: string },
  rate: number,
  seconds: number,
  keyOf: () => string = nextKey,
): Promise<Row & { max: number; late: number; worstSecond: { p99: number; at: number } }> {
  const name = `${target.name}, ${rate} req/s`;
  log(`open loop ${name}: ${seconds}s…`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });
  const { hostname, port } = new URL(target.url);
  const histogram: RecordableHistogram = createHistogram();
  // One histogram per second of scheduled send time: a stall shows as one bad second.
  const perSecond: RecordableHistogram[] = Array.from({ length: Math.ceil(seconds) }, () => createHistogram());
  const total = Math.round(rate * seconds);
  const intervalMs = 1000 / rate;
  let sent = 0;
  let done = 0;
  let errors = 0;
  let late = 0;
  const before = await sampleCpu();
  const start = performance.now();
  await new Promise<void>((resolve) => {
    const send = (due: number) => {
      const req = http.request(
        {
          agent,
          host: hostname,
          port,
          path: `${API}/organizations/me`,
          headers: { "X-Platform-Api-Key": keyOf() },
        },
        (res) => {
          res.resume();
          res.once("end", () => {
            if (res.statusCode !== 200) errors++;
            finish(due);
          });
        },
      );
      req.once("error", () => {
        errors++;
        finish(due);
      });
      req.end();
    };
    const finish = (due: number) => {
      const micros = Math.max(1, Math.round((performance.now() - due) * 1000));
      histogram.record(micros);
      perSecond[Math.min(perSecond.length - 1, Math.floor((due - start) / 1000))]?.record(micros);
      if (++done === total) resolve();
    };
    const tick = () => {
      const now = performance.now();
      while (sent < total) {
        const due = start + sent * intervalMs;
        if (due > now) break;
        // More than a millisecond behind its slot: the generator itself fell behind (CPU).
        if (now - due > 1) late++;
        sent++;
        send(due);
      }
      if (sent < total) setTimeout(tick, Math.max(0, start + sent * intervalMs - performance.now()));
    };
    tick();
  });
  const after = await sampleCpu();
  agent.destroy();
  return {
    name,
    rps: total / ((performance.now() - start) / 1000),
    p50: histogram.percentile(50) / 1000,
    p99: histogram.percentile(99) / 1000,
    max: histogram.max / 1000,
    requests: total,
    errors,
    late,
    worstSecond: perSecond
      .map((h, at) => ({ p99: h.count ? h.percentile(99) / 1000 : 0, at }))
      .reduce((worst, second) => (second.p99 > worst.p99 ? second : worst), { p99: 0, at: 0 }),
    cpu: cpuPerRequest(before, after, total),
  };
}

// ---------------------------------------------------------------- the run

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

/** The round whose throughput is the median one. */
function medianRound(rs: Row[]): Row {
  return [...rs].sort((a, b) => a.rps - b.rps)[Math.floor(rs.length / 2)] as Row;
}

const rows: Row[] = [];
const openRows: Awaited<ReturnType<typeof openLoopRow>>[] = [];
const ratios: string[] = [];
try {
  log("warm-up (fills the token cache; discarded)…");
  await autocannonRow("warm-up", `${GATEWAY}${API}/organizations/me`, 10, Math.max(3, Math.ceil(tokenCount / 300)));
  await autocannonRow("warm-up", `${floorUrl}${API}/organizations/me`, 10, 3);
  await directRow(10, 2);
  if (soakSeconds > 0) {
    // Right after the warm-up, so a soak longer than the token cache's TTL runs through the
    // moment the keys the warm-up loaded come due again.
    const soak = await openLoopRow({ name: "gateway", url: GATEWAY }, soakRate, soakSeconds);
    openRows.push({ ...soak, name: `${soak.name} for ${soakSeconds} s (soak)` });
  }
  if (!skip.has("closed")) {
    for (const conns of connectionCounts) {
      const bare: Row[] = [];
      const direct: Row[] = [];
      const floor: Row[] = [];
      const gateway: Row[] = [];
      for (let round = 0; round < rounds; round++) {
        bare.push(await autocannonRow("bare fastify route", `${bareUrl}${API}/organizations/me`, conns, duration));
        direct.push(await directRow(conns, duration));
        floor.push(
          await autocannonRow("floor proxy (floor-proxy.ts)", `${floorUrl}${API}/organizations/me`, conns, duration),
        );
        gateway.push(
          await autocannonRow("gateway GET /organizations/me", `${GATEWAY}${API}/organizations/me`, conns, duration),
        );
      }
      for (const r of [bare, direct, floor, gateway].map(medianRound)) {
        rows.push({ ...r, name: `${r.name}, ${conns} conns` });
      }
      // floor/direct is the most gateway/direct can be on this machine: what a proxy that makes
      // only the gateway's hops, and nothing else, gets of the direct call's throughput.
      for (const [label, dividend, divisor] of [
        ["gateway/direct", gateway, direct],
        ["gateway/floor", gateway, floor],
        ["floor/direct", floor, direct],
      ] as const) {
        const perRound = dividend.map((g, i) => g.rps / (divisor[i] as Row).rps);
        ratios.push(
          `${label} at ${conns} connections: ${median(perRound).toFixed(3)}` +
            (rounds > 1 ? ` (rounds: ${perRound.map((r) => r.toFixed(3)).join(", ")})` : ""),
        );
      }
    }
  }
  if (!skip.has("open")) {
    // The floor proxy at the same rates, in turn with the gateway: the tail any proxy of these
    // hops has here, beside the gateway's.
    for (const rate of rates) {
      openRows.push(await openLoopRow({ name: "floor proxy", url: floorUrl }, rate, duration));
      openRows.push(await openLoopRow({ name: "gateway", url: GATEWAY }, rate, duration));
    }
  }
  if (!skip.has("cold")) {
    // Keys the gateway has never seen, each first sent within the row's first seconds: what a
    // burst of new integrators, or every key after a gateway's restart, costs in look-ups.
    const fresh = await issueTokens(tokenCount, "bench-distributed-cold");
    let next = 0;
    const row = await openLoopRow({ name: "gateway", url: GATEWAY }, coldRate, duration, () => {
      return (fresh[next++ % fresh.length] as { key: string }).key;
    });
    openRows.push({ ...row, name: `${row.name}, ${tokenCount} keys it has not seen` });
  }
  if (!skip.has("deals")) {
    for (const conns of [1, 10]) {
      rows.push(
        await autocannonRow(`POST /deals, ${conns} conns`, `${GATEWAY}${API}/deals`, conns, duration, {
          method: "POST",
          body: dealBody,
        }),
      );
    }
  }
} finally {
  bareServer.kill();
  floorServer.kill();
  await pgPool.end();
  stopWhatWeStarted();
}

// Every process sampled, in this order; a column no row used is left out.
const cpuCols = [
  "gateway",
  "identity",
  "crm-data",
  "revenue",
  "scheduling",
  "analytics",
  "webhooks",
  "webhooks-delivery",
  "postgres",
  "redis",
  "kafka",
  "bare",
  "floor",
  "load generator",
].filter((c) => [...rows, ...openRows].some((r) => (r.cpu[c] ?? 0) > 0.0005));
const cpuCells = (cpu: Record<string, number>) =>
  cpuCols.map((c) => (cpu[c] === undefined || cpu[c] === 0 ? "–" : cpu[c].toFixed(3))).join(" | ");
console.log(`\n| closed loop | req/s | p50 ms | p99 ms | requests | errors | CPU ms/req: ${cpuCols.join(" | ")} |`);
console.log(`|---|---|---|---|---|---|${cpuCols.map(() => "---").join("|")}|`);
for (const r of rows) {
  console.log(
    `| ${r.name} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.requests} | ${r.errors} | ${cpuCells(r.cpu)} |`,
  );
}
if (openRows.length) {
  console.log(
    `\n| open loop GET /organizations/me, rate | sent req/s | p50 ms | p99 ms | worst second: p99 ms (its second) | max ms | errors | late sends | CPU ms/req: ${cpuCols.join(" | ")} |`,
  );
  console.log(`|---|---|---|---|---|---|---|---|${cpuCols.map(() => "---").join("|")}|`);
  for (const r of openRows) {
    console.log(
      `| ${r.name} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.worstSecond.p99.toFixed(1)} (${r.worstSecond.at}) | ${r.max.toFixed(1)} | ${r.errors} | ${r.late} | ${cpuCells(r.cpu)} |`,
    );
  }
}
console.log(`\n${ratios.join("\n")}`);
console.log(
  `the stack, the bare route and the floor proxy on node ${STACK_NODE_VERSION}, the load generator on ${process.version}; ${duration}s per target, ${rounds} round(s), ${tokenCount} tokens, rate limits on, load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}\n`,
);
const failed = [...rows, ...openRows].filter((r) => r.errors > 0);
if (failed.length) {
  console.error(`errors in: ${failed.map((r) => r.name).join(", ")}`);
  process.exitCode = 1;
}
