// scripts/stack.sh, the distributed runtime as local processes: a port that another process
// holds must stop `start` before anything starts. Otherwise the readiness check would be
// answered by the other process while ours failed to bind and restarted in a loop, and the
// stack would report itself ready while serving another build. Uses ports 31200–31269: below
// the kernel's ephemeral range (32768–60999), where another test's listen(0) or outgoing
// connection could hold one of them for a moment (CI once saw 34250 taken).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const PORTS = {
  GATEWAY_PORT: 31200,
  IDENTITY_PORT: 31201,
  SCHEDULING_PORT: 31202,
  CRM_PORT: 31203,
  REVENUE_PORT: 31204,
  ANALYTICS_PORT: 31205,
  WEBHOOKS_PORT: 31206,
  DELIVERY_PORT: 31207,
  ADMIN_PORT: 31208,
  CRM_ADMIN_PORT: 31209,
  REVENUE_ADMIN_PORT: 31210,
  ANALYTICS_ADMIN_PORT: 31211,
  METRICS_BASE_PORT: 31220,
};
const runDir = mkdtempSync(join(tmpdir(), "platform-stack-run-"));
const held: Server[] = [];

function hold(port: number): Promise<void> {
  const server = createServer((socket) => socket.destroy());
  held.push(server);
  return new Promise((done, fail) => {
    server.once("error", fail);
    server.listen(port, "127.0.0.1", () => done());
  });
}

beforeAll(async () => {
  // Another program on the gateway's port and on revenue's /metrics port (base + 4).
  await hold(PORTS.GATEWAY_PORT);
  await hold(PORTS.METRICS_BASE_PORT + 4);
});
afterAll(async () => {
  await Promise.all(held.map((s) => new Promise((done) => s.close(done))));
  rmSync(runDir, { recursive: true, force: true });
});

/** `stack.sh start` with an unknown runtime, `settings` and ports of its own (all free). */
function startWithFreePorts(settings: NodeJS.ProcessEnv) {
  const env: NodeJS.ProcessEnv = { ...process.env, STACK_RUN_DIR: runDir, STACK_RUNTIME: "none", ...settings };
  for (const [name, port] of Object.entries(PORTS)) env[name] = String(port + 40);
  return spawnSync("bash", ["scripts/stack.sh", "start"], { cwd: ROOT, env, encoding: "utf8", timeout: 30_000 });
}

describe("scripts/stack.sh start", () => {
  it("refuses ports another process holds, naming each, before it starts anything", () => {
    // An unknown runtime as well: a script without the port check stops there (status 2), not
    // after starting Postgres, Kafka and processes this test would then have to stop.
    const env: NodeJS.ProcessEnv = { ...process.env, STACK_RUN_DIR: runDir, STACK_RUNTIME: "none" };
    for (const [name, port] of Object.entries(PORTS)) env[name] = String(port);
    const run = spawnSync("bash", ["scripts/stack.sh", "start"], { cwd: ROOT, env, encoding: "utf8", timeout: 30_000 });
    expect(run.status, run.stdout + run.stderr).toBe(1);
    expect(run.stderr).toContain(`${PORTS.GATEWAY_PORT} (gateway)`);
    expect(run.stderr).toContain(`${PORTS.METRICS_BASE_PORT + 4} (revenue)`);
    expect(run.stderr).not.toContain(`${PORTS.IDENTITY_PORT} (identity)`);
    // Nothing started: no Postgres or Kafka step ran, no process has a pid file.
    expect(run.stdout).toBe("");
    expect(readdirSync(runDir)).toEqual([]);
  });

  it("refuses a STACK_NODE that is no node binary, before it starts anything", () => {
    // The unknown runtime again stops a script without the check.
    const run = startWithFreePorts({ STACK_NODE: "/no/such/node" });
    expect(run.status, run.stdout + run.stderr).toBe(2);
    expect(run.stderr).toContain("STACK_NODE=/no/such/node: no such node binary");
    expect(run.stdout).toBe("");
    expect(readdirSync(runDir)).toEqual([]);
  });

  it("runs on the node STACK_NODE names, and says so", () => {
    // The check comes before the runtime's, so the unknown runtime stops the start right after it.
    const run = startWithFreePorts({ STACK_NODE: process.execPath });
    expect(run.status, run.stdout + run.stderr).toBe(2);
    expect(run.stderr).toContain(`processes run on Node ${process.version} (${process.execPath})`);
    expect(run.stderr).toContain("STACK_RUNTIME must be compiled or source");
    expect(readdirSync(runDir)).toEqual([]);
  });
});

describe("scripts/stack.sh roll", () => {
  const roll = (...args: string[]) =>
    spawnSync("bash", ["scripts/stack.sh", "roll", ...args], {
      cwd: ROOT,
      env: { ...process.env, STACK_RUN_DIR: runDir, STACK_RUNTIME: "none" },
      encoding: "utf8",
      timeout: 30_000,
    });

  it("refuses a process it does not know, naming the ones it does", () => {
    const run = roll("identity", "nope");
    expect(run.status, run.stdout + run.stderr).toBe(2);
    expect(run.stderr).toContain("no process 'nope'; the processes: identity scheduling");
  });

  it("refuses to roll a process that is not running, before it builds or starts anything", () => {
    const run = roll("revenue");
    expect(run.status, run.stdout + run.stderr).toBe(1);
    expect(run.stderr).toContain("revenue: not running (scripts/stack.sh start first)");
    expect(run.stdout).toBe("");
    expect(readdirSync(runDir)).toEqual([]);
  });
});
