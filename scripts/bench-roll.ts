/**
 * npm run bench -- --suite roll — every process of the stack replaced while an even load runs
 * through the gateway: open loop at --rate (500 req/s) of mixed reads (every service) and keyed
 * writes (POST /deals with an Idempotency-Key, one request in five), each deal's deal.created
 * webhook delivered to a local receiver. Each --modes entry is one phase of the same run:
 *   restart  scripts/stack.sh restart all: each process stopped, then started (nothing serves between)
 *   roll     scripts/stack.sh roll all: the new instance ready on the same ports before the old drains
 * Per phase: requests, failures (by status or error), requests retried on a reused keep-alive
 * connection the server closed before answering, latency from the scheduled send time, webhooks
 * lost (a created deal whose webhook never came within --settle seconds) and duplicated (an event
 * delivered more than once), and CPU per process over the phase (every instance summed).
 */
import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createClient } from "@connectrpc/connect";
import { IdentityAdminService } from "@platform/contracts/identity";
import { adminClientInterceptor, httpTransport } from "@platform/kit/connect";
import { type LoadResult, startLoad } from "./bench-roll/load.js";
import { cpuWatch, webhookReceiver } from "./bench-roll/watch.js";
import {
  loadAverage,
  portOpen,
  sleep,
  stackPid,
  stringFlags,
  suiteArgs,
  usageError,
  wholeNumber,
} from "./bench-support.js";
import { PROCESSES } from "./stack-processes.js";

const values = suiteArgs(
  stringFlags({
    rate: "500",
    modes: "restart,roll",
    processes: "all",
    "warm-up": "10",
    lead: "5",
    tail: "5",
    settle: "60",
  }),
  `usage: npm run bench -- --suite roll [--rate 500] [--modes restart,roll] [--processes all|NAME,...]
    [--warm-up 10] [--lead 5] [--tail 5] [--settle 60]
Uses the stack of GATEWAY_PORT / STACK_RUN_DIR (and the other variables of scripts/stack.sh), or starts
one (and stops it at the end). Its webhooks processes must allow private targets (the bench's receiver is on
127.0.0.1): the stack it starts has WEBHOOKS_ALLOW_PRIVATE_TARGETS=true. The receiver listens on
ROLL_RECEIVER_PORT (default GATEWAY_PORT + 900).
  --rate        requests a second, sent at an even pace (open loop)
  --modes       the phases, in order: restart (stop, then start) and/or roll (scripts/stack.sh roll)
  --processes   which processes each phase replaces, in order (all: every one, the gateway last)
  --warm-up     seconds of load before the first phase (discarded)
  --lead/--tail seconds of load before the replacing starts and after it ends
  --settle      seconds to wait after a phase for the webhooks of its writes`,
);
const rate = wholeNumber("rate", values.rate);
const modes = values.modes.split(",").filter(Boolean);
for (const m of modes) if (m !== "restart" && m !== "roll") usageError(`--modes takes restart and roll, not '${m}'`);
const names = values.processes === "all" ? PROCESSES : values.processes.split(",");
for (const n of names) if (!PROCESSES.includes(n)) usageError(`--processes: no process '${n}'`);
const warmUp = wholeNumber("warm-up", values["warm-up"], 0);
const lead = wholeNumber("lead", values.lead, 0);
const tail = wholeNumber("tail", values.tail, 0);
const settle = wholeNumber("settle", values.settle, 1);

const env = process.env;
const gateway = `http://127.0.0.1:${env.GATEWAY_PORT ?? 8080}`;
const runDir = env.STACK_RUN_DIR ?? ".run";
const receiverPort = Number(env.ROLL_RECEIVER_PORT ?? Number(env.GATEWAY_PORT ?? 8080) + 900);
const log = (line: string) => process.stderr.write(`${line}\n`);
// New instances of the delivery worker inherit it from the roll's environment.
env.WEBHOOKS_ALLOW_PRIVATE_TARGETS = "true";

let startedStack = false;
if (!(await portOpen(gateway))) {
  log(`no gateway on ${gateway}; starting the stack (run dir ${runDir})…`);
  startedStack = true;
  execFileSync("bash", ["scripts/stack.sh", "start"], { stdio: ["ignore", "inherit", "inherit"] });
}
const stopStack = () => {
  if (startedStack) execFileSync("bash", ["scripts/stack.sh", "stop"], { stdio: ["ignore", "inherit", "inherit"] });
};
try {
  await main();
} finally {
  stopStack();
}

async function main(): Promise<void> {
  // The webhooks API refuses an http:// endpoint and the worker a private address without it.
  for (const name of ["webhooks", "webhooks-delivery"]) {
    const pid = stackPid(runDir, name);
    if (pid === undefined) throw new Error(`no ${name} running in ${runDir}`);
    if (!readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes("WEBHOOKS_ALLOW_PRIVATE_TARGETS=true")) {
      throw new Error(`the stack's ${name} refuses 127.0.0.1: start it with WEBHOOKS_ALLOW_PRIVATE_TARGETS=true`);
    }
  }
  const admin = createClient(
    IdentityAdminService,
    httpTransport(`http://127.0.0.1:${env.ADMIN_PORT ?? 8081}`, [
      adminClientInterceptor(env.PLATFORM_ADMIN_SECRET ?? "dev-admin-secret-change-me"),
    ]),
  );
  const acme = (await admin.listOrganizations({})).organizations.find((o) => o.name === "Acme Corp");
  if (!acme) throw new Error("the stack has no sandbox org 'Acme Corp'");
  // 20 writes a minute per key: enough keys that each writes at most 15 a minute.
  const keyCount = Math.ceil((rate / 5) * 4) + 1;
  log(`issuing ${keyCount} keys…`);
  const keys: string[] = [];
  for (let i = 0; i < keyCount; i++) {
    const scopes = ["organizations:read", "deals:read", "deals:write", "accounts:read", "smart-scheduling:read"];
    scopes.push("webhooks:read", "webhooks:write", "email-blasts:read");
    keys.push((await admin.createToken({ orgId: acme.id, name: `bench-roll-${i}`, scopes })).key);
  }
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${gateway}/api/v1alpha1${path}`, {
      method,
      headers: {
        "X-Platform-Api-Key": keys[0] as string,
        ...(body === undefined ? {} : { "content-type": "application/json", "idempotency-key": crypto.randomUUID() }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, unknown>;
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const account = ((await api("GET", "/accounts?limit=1")).items as { id: string }[])[0];
  const deal = ((await api("GET", "/deals?limit=1")).items as { stage: string }[])[0];
  if (!account || !deal) throw new Error("the sandbox has no account or no deal");

  const run = Date.now().toString(36);
  const receiver = webhookReceiver(`/roll/${run}`);
  await new Promise<void>((resolve, reject) => {
    receiver.server.once("error", reject);
    receiver.server.listen(receiverPort, "127.0.0.1", () => resolve());
  });
  const subscription = await api("POST", "/webhook-subscriptions", {
    endpointUrl: `http://127.0.0.1:${receiverPort}/roll/${run}`,
    events: ["revenue.deal.created"],
  });
  if ((env.STACK_RUNTIME ?? "compiled") === "compiled") {
    log("building dist/ for the new instances (npm run build)…");
    execFileSync("npm", ["run", "--silent", "build"], { stdio: ["ignore", "ignore", "inherit"] });
  }
  const fixtures = (label: string) => ({ gateway, keys, accountId: account.id, stage: deal.stage, label });

  /** Waits until every created deal's webhook came, or `seconds` passed; the names still missing. */
  const missingAfter = async (created: string[], seconds: number) => {
    const until = Date.now() + seconds * 1000;
    let missing = created.filter((n) => !receiver.names.has(n));
    while (missing.length > 0 && Date.now() < until) {
      await sleep(500);
      missing = missing.filter((n) => !receiver.names.has(n));
    }
    return missing;
  };

  if (warmUp > 0) {
    log(`warm-up: ${warmUp} s at ${rate} req/s…`);
    const load = startLoad(fixtures(`Roll warm ${run}`), rate);
    await sleep(warmUp * 1000);
    const r = await load.stop();
    const missing = await missingAfter(r.created, settle);
    log(`warm-up: ${r.ok}/${r.sent} ok, ${missing.length} webhooks missing`);
  }

  const rows: { mode: string; r: LoadResult; took: number; lost: number; dup: number; cpu: Map<string, number> }[] = [];
  for (const mode of modes) {
    const dup0 = receiver.duplicates();
    const cpu = cpuWatch(runDir, PROCESSES);
    const load = startLoad(fixtures(`Roll ${mode} ${run}`), rate);
    await sleep(lead * 1000);
    log(`${mode}: scripts/stack.sh ${mode} ${names.join(" ")} under ${rate} req/s…`);
    const t0 = performance.now();
    // dist/ was built before the phases: a build is no part of replacing a process.
    const code = await new Promise<number>((resolve) => {
      spawn("bash", ["scripts/stack.sh", mode, ...names], {
        stdio: ["ignore", "inherit", "inherit"],
        env: { ...env, STACK_BUILD: "0" },
      }).once("exit", (c) => resolve(c ?? 1));
    });
    if (code !== 0) throw new Error(`scripts/stack.sh ${mode} ${names.join(" ")} exited with ${code}`);
    const took = (performance.now() - t0) / 1000;
    await sleep(tail * 1000);
    const r = await load.stop();
    const cpuMs = cpu.stop();
    const missing = await missingAfter(r.created, settle);
    rows.push({ mode, r, took, lost: missing.length, dup: receiver.duplicates() - dup0, cpu: cpuMs });
    if (missing.length > 0)
      log(`${mode}: ${missing.length} webhooks never came, e.g. ${missing.slice(0, 3).join(", ")}`);
  }
  await fetch(`${gateway}/api/v1alpha1/webhook-subscriptions/${subscription.id}`, {
    method: "DELETE",
    headers: { "X-Platform-Api-Key": keys[1] as string },
  }).catch(() => undefined);
  receiver.server.closeAllConnections();
  receiver.server.close();

  console.log(
    `\n| phase (${names.length === PROCESSES.length ? "every process" : names.join(", ")}) | took s | requests | failed | retried on a closed keep-alive | p50 ms | p99 ms | max ms | worst second p99 ms | writes | webhooks lost | duplicates |`,
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|---|---|");
  for (const { mode, r, took, lost, dup } of rows) {
    const failed = [...r.failures.values()].reduce((a, b) => a + b, 0);
    console.log(
      `| ${mode} | ${took.toFixed(1)} | ${r.sent} | ${failed} | ${r.retried} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(0)} | ${r.max.toFixed(0)} | ${r.worstSecond.p99.toFixed(0)} (s ${r.worstSecond.at}) | ${r.created.length} | ${lost} | ${dup} |`,
    );
  }
  for (const { mode, r } of rows) {
    for (const [why, n] of r.failures) console.log(`  ${mode}: ${n} × ${why}`);
  }
  const labels = [...new Set(rows.flatMap((row) => [...row.cpu.keys()]))];
  console.log(`\nCPU ms per request over each phase (every instance of a process summed; shared infra machine-wide):`);
  console.log(`| phase | ${labels.join(" | ")} |\n|---|${labels.map(() => "---").join("|")}|`);
  for (const { mode, r, cpu } of rows) {
    console.log(`| ${mode} | ${labels.map((l) => ((cpu.get(l) ?? 0) / Math.max(1, r.sent)).toFixed(2)).join(" | ")} |`);
  }
  const migrate = (() => {
    try {
      return readFileSync("/proc/sys/net/ipv4/tcp_migrate_req", "utf8").trim();
    } catch {
      return "?";
    }
  })();
  console.log(
    `\n${rate} req/s, ${lead} s lead, ${tail} s tail, settle ${settle} s; node ${process.version} (load generator); ` +
      `net.ipv4.tcp_migrate_req=${migrate}; load average ${loadAverage()}; ${new Date().toISOString()}`,
  );
  const bad = rows.filter((row) => row.mode === "roll" && (row.lost > 0 || row.r.failures.size > 0));
  if (bad.length > 0) process.exitCode = 1;
}
