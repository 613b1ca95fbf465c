import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { hostname, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCK_FILE } from "../src/data-lock.js";

// `npm start` as a user runs it: real processes on real ports (31100–31109: below the kernel's
// ephemeral range, where no other test's listen(0) can take one) and a temporary data
// directory. A second process on a directory in use, and a port already taken, each end in one
// line naming what to change, and nothing written before is lost.
const ROOT = resolve(import.meta.dirname, "../..");
const ENTRY = join(ROOT, "runtime/src/embedded.ts");
const PORT = 31100;
const ADMIN_PORT = 31101;
const API = `http://127.0.0.1:${PORT}/api/v1alpha1`;
const START_TIMEOUT_MS = 240_000;

const dataDir = mkdtempSync(join(tmpdir(), "platform-first-run-"));
const running = new Set<ChildProcess>();
let blocker: Server;
const BLOCKED_PORT = 31104;

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; stderr: string }>;
}

function start(env: Record<string, string>): Started {
  const child = spawn(process.execPath, ["--import", "tsx", ENTRY], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(PORT),
      ADMIN_PORT: String(ADMIN_PORT),
      PLATFORM_DATA_DIR: dataDir,
      LOG_LEVEL: "warn",
      OTEL_SDK_DISABLED: "true",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<{ code: number | null; stderr: string }>((done) =>
    child.on("exit", (code) => {
      running.delete(child);
      done({ code, stderr });
    }),
  );
  return { child, output: () => stdout + stderr, exited };
}

async function listening(p: Started): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!p.output().includes("listening on")) {
    if (p.child.exitCode !== null) throw new Error(`exited early:\n${p.output()}`);
    if (Date.now() > deadline) throw new Error(`no start in time:\n${p.output()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function stop(p: Started): Promise<void> {
  p.child.kill("SIGTERM");
  expect((await p.exited).code).toBe(0);
}

/** What a start that must fail printed on stderr: exactly one line, no stack trace. */
async function refusal(p: Started): Promise<string> {
  const { code, stderr } = await p.exited;
  expect(code, p.output()).toBe(1);
  const lines = stderr.split("\n").filter((l) => l.trim() !== "");
  expect(lines, stderr).toHaveLength(1);
  expect(stderr).not.toMatch(/^\s+at /m);
  return lines[0]!;
}

function apiKey(): string {
  const keys = JSON.parse(readFileSync(join(dataDir, "sandbox-keys.json"), "utf8")) as { name: string; key: string }[];
  return keys.find((k) => k.name === "acme-full")!.key;
}

async function organizationName(key: string): Promise<{ name: string; etag: string; id: string }> {
  const res = await fetch(`${API}/organizations/me`, { headers: { "x-platform-api-key": key } });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { name: string; id: string };
  return { name: body.name, id: body.id, etag: res.headers.get("etag") ?? "" };
}

beforeAll(async () => {
  blocker = createServer();
  await new Promise<void>((r) => blocker.listen(BLOCKED_PORT, "127.0.0.1", () => r()));
});
afterAll(async () => {
  for (const child of running) child.kill("SIGKILL");
  await new Promise<void>((r) => blocker.close(() => r()));
  rmSync(dataDir, { recursive: true, force: true });
});

describe("npm start on a data directory and ports", () => {
  it(
    "refuses a second process on a data directory in use, in one line, and loses nothing either wrote",
    async () => {
      const first = start({});
      await listening(first);
      const lock = JSON.parse(readFileSync(join(dataDir, LOCK_FILE), "utf8"));
      expect(lock).toMatchObject({ pid: first.child.pid, host: hostname() });

      const key = apiKey();
      const before = await organizationName(key);
      const renamed = `First run ${Date.now()}`;
      const patch = await fetch(`${API}/organizations/${before.id}`, {
        method: "PATCH",
        headers: {
          "x-platform-api-key": key,
          "content-type": "application/json",
          "idempotency-key": "first-run-rename",
          "if-match": before.etag,
        },
        body: JSON.stringify({ name: renamed }),
      });
      expect(patch.status, await patch.clone().text()).toBe(200);

      const second = start({ PORT: "31102", ADMIN_PORT: "31103" });
      const line = await refusal(second);
      expect(line).toContain(`in use by another platform process (pid ${first.child.pid}`);
      expect(line).toContain("PLATFORM_DATA_DIR");

      // The first one still serves, with its write.
      expect((await organizationName(key)).name).toBe(renamed);
      await stop(first);
      expect(existsSync(join(dataDir, LOCK_FILE))).toBe(false);

      // A lock left by a process that is gone (kill -9, a crash) is taken over.
      const gone = spawnSync(process.execPath, ["-e", ""]).pid;
      writeFileSync(join(dataDir, LOCK_FILE), JSON.stringify({ pid: gone, host: hostname(), startedAt: "then" }));
      const again = start({});
      await listening(again);
      expect((await organizationName(key)).name).toBe(renamed);
      await stop(again);
    },
    4 * START_TIMEOUT_MS,
  );

  it(
    "answers a port in use with one line naming PORT or ADMIN_PORT, and frees the directory",
    async () => {
      const api = await refusal(start({ PORT: String(BLOCKED_PORT) }));
      expect(api).toBe(
        `Port ${BLOCKED_PORT} on 127.0.0.1 (PORT) is already in use: set PORT to a free port, e.g. PORT=8090 npm start.`,
      );
      const admin = await refusal(start({ ADMIN_PORT: String(BLOCKED_PORT) }));
      expect(admin).toContain(`Port ${BLOCKED_PORT} on 127.0.0.1 (ADMIN_PORT) is already in use`);
      expect(admin).toContain("PLATFORM_ADMIN_URL");
      expect(existsSync(join(dataDir, LOCK_FILE))).toBe(false);

      // The ports are checked before anything is written: no directory, no seeded database, no keys.
      const fresh = join(dataDir, "never-created");
      await refusal(start({ PORT: String(BLOCKED_PORT), PLATFORM_DATA_DIR: fresh }));
      await refusal(start({ ADMIN_PORT: String(BLOCKED_PORT), PLATFORM_DATA_DIR: fresh }));
      expect(existsSync(fresh)).toBe(false);
    },
    3 * START_TIMEOUT_MS,
  );
});
