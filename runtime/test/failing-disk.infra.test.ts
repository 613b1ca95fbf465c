import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sandboxAccountId } from "@platform/sandbox";
import { afterAll, describe, expect, it } from "vitest";
import { type EmbeddedProcess, startEmbedded, stopEmbedded } from "./support/embedded-process.js";

// The embedded runtime when its data directory cannot be written (`chattr +i`, as root): the
// API answers 503 service-unavailable at once and /readyz 503 within 5 s, one line names the
// path and the error, it serves again once the directory can be written, SIGTERM still ends
// it; and when the engine itself meets the failed write, the process exits non-zero saying so.

const base = (Number(process.env.TEST_PORT_BASE) || 20_000) + 1200 + Math.floor(Math.random() * 100) * 10;
const dirs: string[] = [];
const running: EmbeddedProcess[] = [];

/** chattr works here only as root on a file system with the immutable flag. */
function chattrWorks(): boolean {
  const dir = mkdtempSync(join(tmpdir(), "platform-chattr-"));
  const file = join(dir, "f");
  writeFileSync(file, "x");
  try {
    execFileSync("chattr", ["+i", file], { stdio: "ignore" });
    execFileSync("chattr", ["-i", file], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const immutable = (dir: string, on: boolean) => execFileSync("chattr", ["-R", on ? "+i" : "-i", dir]);

afterAll(async () => {
  for (const p of running) await stopEmbedded(p, "SIGKILL");
  for (const dir of dirs) {
    immutable(dir, false);
    rmSync(dir, { recursive: true, force: true });
  }
});

const PROBLEM = "https://docs.platform.example/platform-api/errors/service-unavailable";

async function start(dataDir: string, port: number, env: Record<string, string>) {
  const p = await startEmbedded({ dataDir, port, env: { LOG_LEVEL: "info", SHUTDOWN_TIMEOUT_MS: "5000", ...env } });
  running.push(p);
  return p;
}

let n = 0;
async function createDeal(p: EmbeddedProcess) {
  const started = Date.now();
  const res = await fetch(`${p.api}/deals`, {
    method: "POST",
    headers: {
      "x-platform-api-key": p.key("acme-full"),
      "content-type": "application/json",
      "idempotency-key": `disk-${++n}`,
    },
    body: JSON.stringify({
      name: `Disk test ${n}`,
      accountId: sandboxAccountId("sandbox", "analytical"),
      stage: "Discovery",
    }),
  });
  const body = (await res.json()) as { id?: string } & Record<string, unknown>;
  return { status: res.status, type: res.headers.get("content-type"), body, ms: Date.now() - started };
}

const readyz = async (p: EmbeddedProcess) => (await fetch(p.api.replace("/api/v1alpha1", "/readyz"))).status;

/** Milliseconds until `probe` holds (polling every 100 ms), failing past `ms`. */
async function within(what: string, ms: number, probe: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (!(await probe())) {
    if (Date.now() - started > ms) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return Date.now() - started;
}

describe.skipIf(!chattrWorks())(
  "the embedded runtime on a data directory that cannot be written",
  { timeout: 600_000 },
  () => {
    it("answers 503 at once, /readyz 503 within 5 s, says so once, recovers, and still stops on SIGTERM", async () => {
      const dataDir = mkdtempSync(join(tmpdir(), "platform-disk-"));
      dirs.push(dataDir);
      let p = await start(dataDir, base, { DISK_CHECK_INTERVAL_MS: "500" });
      const before = await createDeal(p);
      expect(before.status).toBe(201);
      // Let the deal's event work settle, so no write is under way when the directory freezes.
      await new Promise((r) => setTimeout(r, 3000));

      immutable(dataDir, true);
      expect(await within("/readyz 503", 5000, async () => (await readyz(p)) === 503)).toBeLessThanOrEqual(5000);
      const refused = await createDeal(p);
      expect(refused.status).toBe(503);
      expect(refused.type).toMatch(/^application\/problem\+json/);
      expect(refused.body).toMatchObject({ type: PROBLEM, status: 503 });
      expect(refused.ms).toBeLessThan(3000);
      const said = () =>
        p
          .output()
          .split("\n")
          .filter((l) => l.includes('"msg":"data directory cannot be written'));
      // The line may reach the pipe a moment after the state it reports.
      await within("the log line", 5000, async () => said().length > 0);
      expect(said()).toHaveLength(1);
      expect(said()[0]).toContain(join(dataDir, "pglite"));
      expect(said()[0]).toContain("EPERM");

      // Writable again: it serves again, without a restart.
      immutable(dataDir, false);
      await within("/readyz 200 again", 10_000, async () => (await readyz(p)) === 200);
      const after = await createDeal(p);
      expect(after.status).toBe(201);
      await new Promise((r) => setTimeout(r, 3000));

      // Frozen again, SIGTERM ends it within its drain timeout (5 s here).
      immutable(dataDir, true);
      await within("/readyz 503", 5000, async () => (await readyz(p)) === 503);
      const stopping = Date.now();
      const exit = await stopEmbedded(p, "SIGTERM");
      expect(Date.now() - stopping).toBeLessThan(5000 + 2000);
      expect(exit.signal).toBeNull();
      running.splice(running.indexOf(p), 1);

      // Nothing acknowledged was lost.
      immutable(dataDir, false);
      p = await start(dataDir, base + 2, {});
      for (const deal of [before, after]) {
        const res = await fetch(`${p.api}/deals/${deal.body.id}`, {
          headers: { "x-platform-api-key": p.key("acme-full") },
        });
        expect(res.status).toBe(200);
      }
      await stopEmbedded(p);
      running.splice(running.indexOf(p), 1);
    });

    it("exits non-zero naming the file when the engine meets a write it cannot make", async () => {
      const dataDir = mkdtempSync(join(tmpdir(), "platform-disk-"));
      dirs.push(dataDir);
      // The watch does not look again for ten minutes: the engine meets the failure first.
      const p = await start(dataDir, base + 4, { DISK_CHECK_INTERVAL_MS: "600000" });
      const before = await createDeal(p);
      expect(before.status).toBe(201);
      await new Promise((r) => setTimeout(r, 3000));
      immutable(dataDir, true);
      await createDeal(p).catch(() => undefined);
      const exit = await Promise.race([
        p.exited,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no exit:\n${p.output()}`)), 30_000)),
      ]);
      running.splice(running.indexOf(p), 1);
      expect(exit.code).toBe(1);
      expect(p.output()).toMatch(/the embedded database cannot continue: writing \S+pglite\S* failed \(EPERM\)/);
    });
  },
);
