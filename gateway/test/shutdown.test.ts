import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The gateway as its own process, with a request in flight that cannot finish (identity
// accepts the connection and never answers) and its stdout pipe closed by the reader: SIGTERM
// must still end it within SHUTDOWN_TIMEOUT_MS, and a second signal at once.
let hung: Server;
let hungPort = 0;
const sockets = new Set<Socket>();
const children = new Set<ChildProcess>();

beforeAll(async () => {
  hung = createServer((s) => {
    sockets.add(s);
    s.on("error", () => {});
  });
  await new Promise<void>((r) => hung.listen(0, "127.0.0.1", () => r()));
  hungPort = (hung.address() as { port: number }).port;
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const s of sockets) s.destroy();
  await new Promise((r) => hung.close(r));
});

async function startGateway(env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ["--import", "tsx", "gateway/src/main.ts"], {
    env: {
      ...process.env,
      PORT: "0",
      HOST: "127.0.0.1",
      IDENTITY_URL: `http://127.0.0.1:${hungPort}`,
      REDIS_URL: "",
      KAFKA_BROKERS: "",
      LOG_LEVEL: "info",
      UPSTREAM_READ_TIMEOUT_MS: "55000",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  // The listening address is in fastify's first log lines.
  const port = await new Promise<number>((resolve, reject) => {
    let seen = "";
    const onData = (d: Buffer) => {
      seen += d;
      const m = /listening at http:\/\/127\.0\.0\.1:(\d+)/i.exec(seen);
      if (m) {
        child.stdout?.off("data", onData);
        resolve(Number(m[1]));
      }
    };
    child.stdout?.on("data", onData);
    child.once("exit", (code) => reject(new Error(`gateway exited with ${code}: ${seen}`)));
  });
  return { child, port };
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.once("exit", (code) => resolve(code));
  });

/** Starts a request that stays in flight (its API key look-up hangs) and resolves once the gateway has it. */
async function requestInFlight(port: number): Promise<void> {
  for (const s of sockets) s.destroy();
  sockets.clear();
  void fetch(`http://127.0.0.1:${port}/api/v1alpha1/organizations/me`, {
    headers: { "x-platform-api-key": `pk_live_${"a".repeat(48)}` },
  }).catch(() => {});
  const deadline = Date.now() + 10_000;
  while (sockets.size === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(sockets.size).toBeGreaterThan(0);
}

describe("SIGTERM", () => {
  it("ends the gateway within its drain timeout with a request stuck in flight and its stdout pipe closed", async () => {
    const { child, port } = await startGateway({ SHUTDOWN_TIMEOUT_MS: "1500" });
    await requestInFlight(port);
    // The reader of stdout goes away: every later log line is an EPIPE.
    child.stdout?.destroy();
    const started = Date.now();
    child.kill("SIGTERM");
    const code = await exited(child);
    const took = Date.now() - started;
    expect(code).toBe(1);
    expect(took).toBeGreaterThanOrEqual(1_400);
    // The drain timeout, plus a generous margin for a loaded machine; the bug was 20 minutes.
    expect(took).toBeLessThan(10_000);
  }, 60_000);

  it("exits at once on a second signal", async () => {
    const { child, port } = await startGateway({ SHUTDOWN_TIMEOUT_MS: "600000" });
    await requestInFlight(port);
    const started = Date.now();
    child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 300));
    child.kill("SIGTERM");
    expect(await exited(child)).toBe(1);
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 60_000);
});
