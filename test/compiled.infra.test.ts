import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { newId } from "@platform/kit/ids";
import { SLOT_TOKEN_TAIL_BYTES, slotTokenSigner } from "@platform/scheduling/bench";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { NODE_FLAGS, PG_URL, runId } from "./support/processes.js";

// The images run the compiled bundles (`npm run build`: dist/<process>/main.js), not the
// sources the other tests run through tsx. A bundle finds its SQL migrations in copies next
// to it; this test runs each migrating process's bundle with MIGRATE_ONLY against a database
// of its own, as the Kubernetes migration Jobs do, and reads back what it applied.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const run = runId();
/** The processes that own a database, with the schema their migrations create. */
const MIGRATING = [
  ["identity", "identity"],
  ["scheduling", "scheduling"],
  ["crm-data", "crm"],
  ["revenue", "revenue"],
  ["analytics", "analytics"],
  ["webhooks", "webhooks"],
  ["request-logs", "request_logs"],
] as const;
const databases: string[] = [];

function runBundle(name: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    const proc = spawn(process.execPath, [...NODE_FLAGS, join(ROOT, "dist", name, "main.js")], {
      env: { ...process.env, LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    proc.stdout.on("data", (d) => {
      output += d;
    });
    proc.stderr.on("data", (d) => {
      output += d;
    });
    const force = setTimeout(() => proc.kill("SIGKILL"), 60_000);
    proc.once("exit", (code) => {
      clearTimeout(force);
      done({ code, output });
    });
  });
}

afterAll(async () => {
  const admin = new pg.Client({ connectionString: `${PG_URL}/postgres` });
  await admin.connect();
  for (const db of databases) await admin.query(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
  await admin.end();
});

describe("the compiled bundles", () => {
  it("build, and each migrating process applies its own and the kit's migrations from its bundle", async () => {
    const build = spawnSync(process.execPath, ["--import", "tsx", "scripts/build.ts"], { cwd: ROOT, encoding: "utf8" });
    expect(build.status, build.stderr).toBe(0);
    for (const [name, schema] of MIGRATING) {
      expect(existsSync(join(ROOT, "dist", name, "main.js"))).toBe(true);
      const database = `compiled_${run}_${schema}`;
      databases.push(database);
      const { code, output } = await runBundle(name, { DATABASE_URL: `${PG_URL}/${database}`, MIGRATE_ONLY: "true" });
      expect(code, `${name}: ${output}`).toBe(0);
      const client = new pg.Client({ connectionString: `${PG_URL}/${database}` });
      await client.connect();
      try {
        const { rows } = await client.query<{ source: string }>(
          `SELECT DISTINCT source FROM ${schema}.schema_migrations ORDER BY source`,
        );
        expect(rows.map((r) => r.source).sort(), name).toEqual(["kit", schema].sort());
      } finally {
        await client.end();
      }
    }
  });

  it("signs slot tokens in scheduling's bundled worker thread as the sources do", async () => {
    const worker = new Worker(join(ROOT, "dist", "scheduling", "sign-worker.js"));
    const claims = {
      orgId: newId("org_"),
      scheduleId: newId("sched_"),
      expiresAt: new Date("2030-01-01T08:10:00Z"),
      preview: false,
      durationMinutes: 30,
      formValuesHash: "h",
    };
    const { expiresAt, ...rest } = claims;
    const userId = newId("usr_");
    const starts = [Date.UTC(2030, 0, 1, 9), Date.UTC(2030, 0, 1, 9, 30)];
    try {
      const reply = await new Promise<{ tails?: Uint8Array[]; error?: string }>((done, fail) => {
        worker.once("message", done);
        worker.once("error", fail);
        worker.postMessage({
          id: 1,
          job: {
            secret: "compiled-secret-0123456789",
            claims: { ...rest, expiresAtMs: expiresAt.getTime() },
            hosts: [{ userId, starts: Float64Array.from(starts) }],
          },
        });
      });
      const expected = new Uint8Array(starts.length * SLOT_TOKEN_TAIL_BYTES);
      slotTokenSigner("compiled-secret-0123456789", claims).signTails(userId, starts, 0, starts.length, expected);
      expect(reply.error).toBeUndefined();
      expect(Buffer.from(reply.tails?.[0] ?? []).equals(Buffer.from(expected))).toBe(true);
    } finally {
      await worker.terminate();
    }
  });

  it("serves the developer console from the build beside the compiled gateway, with its CSP", async () => {
    expect(existsSync(join(ROOT, "dist", "console", "index.html"))).toBe(true);
    const port = (Number(process.env.TEST_PORT_BASE) || 20_000) + 2900 + Math.floor(Math.random() * 50) * 2;
    // No service needs to run: the console's page and assets are the gateway's own.
    const gateway = spawn(process.execPath, [...NODE_FLAGS, join(ROOT, "dist", "gateway", "main.js")], {
      env: { ...process.env, PORT: String(port), LOG_LEVEL: "warn", OTEL_SDK_DISABLED: "true" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    gateway.stdout.on("data", (d) => {
      output += d;
    });
    gateway.stderr.on("data", (d) => {
      output += d;
    });
    try {
      let res: Response | undefined;
      for (let i = 0; i < 600 && !res && gateway.exitCode === null; i++) {
        res = await fetch(`http://127.0.0.1:${port}/console/events`).catch(async () => {
          await new Promise((r) => setTimeout(r, 200));
          return undefined;
        });
      }
      expect(res?.status, output).toBe(200);
      expect(res?.headers.get("content-security-policy")).toContain("script-src 'self'");
      expect(res?.headers.get("x-frame-options")).toBe("DENY");
      const script = (await res?.text())?.match(/src="(\/console\/assets\/[^"]+\.js)"/)?.[1];
      const asset = await fetch(`http://127.0.0.1:${port}${script}`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get("cache-control")).toContain("immutable");
    } finally {
      gateway.kill("SIGTERM");
    }
  });
});
