import { randomBytes } from "node:crypto";
import { request } from "node:http";
import { fromJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { SmartScheduleService } from "@platform/contracts/scheduling";
import { systemClock } from "@platform/kit/clock";
import { httpTransport, signingInterceptor } from "@platform/kit/connect";
import { sandboxKeysOffline, sandboxOrgId, sandboxScheduleId } from "@platform/sandbox";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { basePort, type Started, sleep, startProcess } from "./support/processes.js";

// SIGTERM while requests are in flight: the gateway and a service finish every request they
// accepted before they exit. The gateway's own log says when it has accepted them (fastify
// logs each incoming request), so the signal provably lands while they are in progress.
const PG_URL = process.env.PG_URL ?? "postgres://postgres@127.0.0.1:5432";
const run = randomBytes(4).toString("hex");
const seed = `gs-${run}`;
const contextSecret = "gs-context-secret-0123456789";
const port = basePort(5);
const ports = { identity: port, admin: port + 1, scheduling: port + 2, gateway: port + 3 };
const dbs = [`platform_gs_id_${run}`, `platform_gs_sched_${run}`];
const procs: Started[] = [];
const IN_FLIGHT = 12;

const schedulingEnv = {
  DATABASE_URL: `${PG_URL}/${dbs[1]}`,
  PORT: String(ports.scheduling),
  PLATFORM_CONTEXT_SECRET: contextSecret,
  SANDBOX_SEED: seed,
};
const gatewayEnv = {
  PORT: String(ports.gateway),
  HOST: "127.0.0.1",
  IDENTITY_URL: `http://127.0.0.1:${ports.identity}`,
  SCHEDULING_URL: `http://127.0.0.1:${ports.scheduling}`,
  PLATFORM_CONTEXT_SECRET: contextSecret,
  // "incoming request" (what the test watches for) is a debug line: at info a request gets one
  // access-log line, when it is answered.
  LOG_LEVEL: "debug",
};

beforeAll(async () => {
  procs.push(
    await startProcess(
      "identity",
      "services/identity/src/main.ts",
      {
        DATABASE_URL: `${PG_URL}/${dbs[0]}`,
        PORT: String(ports.identity),
        ADMIN_PORT: String(ports.admin),
        PLATFORM_CONTEXT_SECRET: contextSecret,
        SANDBOX_SEED: seed,
      },
      ports.identity,
    ),
  );
  procs.push(await startProcess("scheduling", "services/scheduling/src/main.ts", schedulingEnv, ports.scheduling));
});

afterAll(async () => {
  for (const p of procs.reverse()) await p.stop();
  const client = new pg.Client({ connectionString: `${PG_URL}/postgres` });
  await client.connect();
  for (const db of dbs) await client.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  await client.end();
});

interface Outcome {
  status?: number;
  error?: string;
}

/** One request on a connection of its own; resolves with the status or the socket error. */
function availability(key: string): Promise<Outcome> {
  const body = JSON.stringify({ formValues: { region: "AMER" } });
  return new Promise((resolve) => {
    const req = request(
      {
        host: "127.0.0.1",
        port: ports.gateway,
        method: "POST",
        path: `/api/v1alpha1/smart-schedules/${sandboxScheduleId(seed, "acme-intro")}/availability`,
        agent: false,
        headers: { "content-type": "application/json", "x-platform-api-key": key },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0 }));
        res.on("error", (err) => resolve({ error: err.message }));
      },
    );
    req.on("error", (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    req.end(body);
  });
}

const incoming = (p: Started) =>
  p
    .output()
    .split("\n")
    .filter((l) => l.includes('"incoming request"')).length;

describe("graceful shutdown", () => {
  it("the gateway answers every request it accepted before SIGTERM, then exits 0 and accepts no more", async () => {
    const gateway = await startProcess("gateway", "gateway/src/main.ts", gatewayEnv, ports.gateway);
    const key = sandboxKeysOffline(seed).find((k) => k.name === "acme-full")?.key ?? "";
    const pending = Array.from({ length: IN_FLIGHT }, () => availability(key));
    // Signal once the gateway has accepted them all, while they are still in progress.
    const deadline = Date.now() + 20_000;
    while (incoming(gateway) < IN_FLIGHT && Date.now() < deadline) await sleep(2);
    expect(incoming(gateway)).toBe(IN_FLIGHT);
    const exited = new Promise<number | null>((resolve) => gateway.proc.once("exit", (code) => resolve(code)));
    gateway.proc.kill("SIGTERM");
    const outcomes = await Promise.all(pending);
    expect(outcomes).toEqual(Array.from({ length: IN_FLIGHT }, () => ({ status: 200 })));
    expect(await exited).toBe(0);
    expect(await availability(key)).toEqual({ error: "ECONNREFUSED" });
  });

  it("a service finishes the calls in progress on SIGTERM and refuses new ones cleanly", async () => {
    const scheduling = procs.find((p) => p.name === "scheduling") as Started;
    const api = createClient(
      SmartScheduleService,
      httpTransport(`http://127.0.0.1:${ports.scheduling}`, [
        signingInterceptor(contextSecret, systemClock, () => ({
          principal: "api",
          requestId: "req_gs",
          orgId: sandboxOrgId(seed, "acme"),
          tokenId: "tok_gs",
          scopes: ["smart-scheduling:read"],
        })),
      ]),
    );
    const call = () =>
      api
        .getAvailability({
          scheduleId: sandboxScheduleId(seed, "acme-intro"),
          formValues: { region: fromJson(ValueSchema, "AMER") },
        })
        .then(
          (): { ok: boolean; at: number; code?: Code } => ({ ok: true, at: Date.now() }),
          (err: unknown) => ({ ok: false, at: Date.now(), code: ConnectError.from(err).code }),
        );
    await call(); // one HTTP/2 session, open and warm
    const pending = Array.from({ length: IN_FLIGHT }, call);
    await sleep(20);
    const signalledAt = Date.now();
    const exited = new Promise<number | null>((resolve) => scheduling.proc.once("exit", (code) => resolve(code)));
    scheduling.proc.kill("SIGTERM");
    const outcomes = await Promise.all(pending);
    // Whatever the service had accepted completes; a call it never accepted may only be
    // refused as unavailable (safe to retry), never cut off half-way.
    for (const o of outcomes) expect(o.ok || o.code === Code.Unavailable).toBe(true);
    expect(outcomes.filter((o) => o.ok && o.at > signalledAt).length).toBeGreaterThan(0);
    expect(await exited).toBe(0);
    expect(scheduling.output()).toContain("SIGTERM received, stopping");
    // Started again for afterAll's orderly stop.
    procs.splice(procs.indexOf(scheduling), 1);
    procs.push(await startProcess("scheduling", "services/scheduling/src/main.ts", schedulingEnv, ports.scheduling));
  });
});
