import { type ChildProcess, spawn } from "node:child_process";
import { createConnection } from "node:net";

export interface Started {
  name: string;
  proc: ChildProcess;
  output: () => string;
  stop: () => Promise<void>;
}

/**
 * Starts a service entry point as its own process (`node --import tsx <entry>`) and
 * waits until it listens. Only this process is ever stopped, by its pid.
 */
export async function startProcess(
  name: string,
  entry: string,
  env: Record<string, string>,
  port: number,
  /** How long it may take to listen (several processes starting at once on a loaded machine take longer). */
  timeoutMs = 60_000,
): Promise<Started> {
  const proc = spawn(process.execPath, ["--import", "tsx", entry], {
    env: { ...process.env, LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  proc.stdout?.on("data", (d) => {
    log += d;
  });
  proc.stderr?.on("data", (d) => {
    log += d;
  });
  const started: Started = {
    name,
    proc,
    output: () => log,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
        const force = setTimeout(() => proc.kill("SIGKILL"), 10_000);
        proc.once("exit", () => {
          clearTimeout(force);
          resolve();
        });
        proc.kill("SIGTERM");
      }),
  };
  const deadline = Date.now() + timeoutMs;
  while (!(await portOpen(port))) {
    if (proc.exitCode !== null) throw new Error(`${name} exited with ${proc.exitCode}:\n${log}`);
    if (Date.now() > deadline) {
      await started.stop();
      throw new Error(`${name} did not listen on ${port} within ${timeoutMs / 1000} s:\n${log}`);
    }
    await sleep(200);
  }
  return started;
}

export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A free port range per test file, away from the runtimes' defaults. TEST_PORT_BASE moves
 * the 4,000-port window (engineers sharing a machine each have their own).
 */
export function basePort(offset: number): number {
  const base = Number(process.env.TEST_PORT_BASE) || 20_000;
  const window = Number(process.env.TEST_PORT_WINDOW) || 4_000;
  return base + offset + Math.floor(Math.random() * (window / 10)) * 10;
}
