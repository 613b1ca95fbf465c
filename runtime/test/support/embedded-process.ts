import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

// `npm start` as its own process, for the tests that kill it, starve its disk or restart it:
// real ports (from the caller's window) and a data directory of the test's own.

const ROOT = resolve(import.meta.dirname, "../../..");
const ENTRY = join(ROOT, "runtime/src/embedded.ts");
const START_TIMEOUT_MS = 240_000;

export interface EmbeddedProcess {
  child: ChildProcess;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
  /** Its exit code (null when a signal ended it) and signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  api: string;
  /** A sandbox key by name (sandbox-keys.json of its data directory). */
  key(name: string): string;
}

export async function startEmbedded(opts: {
  dataDir: string;
  port: number;
  env?: Record<string, string>;
}): Promise<EmbeddedProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", ENTRY], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(opts.port),
      ADMIN_PORT: "0",
      PLATFORM_DATA_DIR: opts.dataDir,
      LOG_LEVEL: "warn",
      OTEL_SDK_DISABLED: "true",
      ...opts.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.on("exit", (code, signal) => done({ code, signal })),
  );
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!out.includes("listening on")) {
    if (child.exitCode !== null) throw new Error(`exited early:\n${out}`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`no start in time:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const keys = JSON.parse(readFileSync(join(opts.dataDir, "sandbox-keys.json"), "utf8")) as {
    name: string;
    key: string;
  }[];
  return {
    child,
    output: () => out,
    exited,
    api: `http://127.0.0.1:${opts.port}/api/v1alpha1`,
    key(name) {
      const found = keys.find((k) => k.name === name);
      if (!found) throw new Error(`no sandbox key '${name}'`);
      return found.key;
    },
  };
}

/** Ends it with `signal` (by its pid only) and waits for the exit. */
export async function stopEmbedded(p: EmbeddedProcess, signal: NodeJS.Signals = "SIGTERM") {
  if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill(signal);
  return p.exited;
}
