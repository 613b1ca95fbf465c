import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createConnection } from "node:net";
import { dirname, join, resolve } from "node:path";
import pg from "pg";

// Startup time (spawn → listening) and resident memory per process, compiled (`npm run
// build`, node dist/<process>/main.js) against the sources through tsx (node --import tsx).
// Each process runs against its own database on the machine's Postgres, migrated and seeded
// by a warm-up start first, so what is timed is a restart (as a rolling deploy restarts a
// pod), not the first migration. Each mode of each process: 1 warm-up (which also fills
// tsx's transform cache), then RUNS timed starts; the median is reported. RSS is read from
// /proc 2 s after the port opens.
//   npm run build && node --import tsx scripts/bench-startup.ts [--runs 5] [--port-base 35400] [--only gateway,identity]
// Environment: PG_URL (default postgres://postgres@127.0.0.1:5432), BENCH_DB_PREFIX
// (default bench_startup_; the databases are dropped at the end).

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), "..");
const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
};
const RUNS = arg("--runs", 5);
const PORT_BASE = arg("--port-base", 35_400);
/** `--only a,b`: just these processes. */
const ONLY = process.argv.includes("--only") ? String(process.argv[process.argv.indexOf("--only") + 1]).split(",") : [];
const PG_URL = process.env.PG_URL ?? "postgres://postgres@127.0.0.1:5432";
const DB_PREFIX = process.env.BENCH_DB_PREFIX ?? "bench_startup_";

interface Proc {
  name: string;
  entry: string;
  /** The port that opens when the process is ready, and the environment that places it. */
  env: (port: number) => Record<string, string>;
  database?: string;
}

const service = (name: string, entry: string, database: string): Proc => ({
  name,
  entry,
  database,
  env: (port) => ({ PORT: String(port), ADMIN_PORT: String(port + 1) }),
});

const PROCS: Proc[] = [
  { name: "gateway", entry: "gateway/src/main.ts", env: (port) => ({ PORT: String(port) }) },
  service("identity", "services/identity/src/main.ts", "identity"),
  service("scheduling", "services/scheduling/src/main.ts", "scheduling"),
  service("crm-data", "services/crm-data/src/main.ts", "crm"),
  service("revenue", "services/revenue/src/main.ts", "revenue"),
  service("analytics", "services/analytics/src/main.ts", "analytics"),
  service("webhooks", "services/webhooks/src/main.ts", "webhooks"),
  {
    name: "webhooks-delivery",
    entry: "services/webhooks/src/delivery-main.ts",
    database: "webhooks",
    env: (port) => ({ DELIVERY_PORT: String(port) }),
  },
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const portOpen = (port: number) =>
  new Promise<boolean>((done) => {
    const s = createConnection({ host: "127.0.0.1", port });
    s.once("connect", () => {
      s.destroy();
      done(true);
    });
    s.once("error", () => done(false));
  });

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

/**
 * One timed start. The ports sit in Linux's ephemeral range, where another process's
 * outgoing connection can hold one for a moment: a start refused with EADDRINUSE is retried.
 */
async function startOnce(p: Proc, mode: "tsx" | "compiled", port: number): Promise<{ ms: number; rss: number }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startAttempt(p, mode, port);
    } catch (err) {
      if (attempt >= 5 || !String(err).includes("EADDRINUSE")) throw err;
      console.error(`${p.name} (${mode}): a port was taken, retrying`);
      await sleep(500);
    }
  }
}

async function startAttempt(p: Proc, mode: "tsx" | "compiled", port: number): Promise<{ ms: number; rss: number }> {
  const args = mode === "tsx" ? ["--import", "tsx", p.entry] : [join("dist", p.name, "main.js")];
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    LOG_LEVEL: "warn",
    METRICS_PORT: "0",
    ...p.env(port),
  };
  if (p.database) env.DATABASE_URL = `${PG_URL}/${DB_PREFIX}${p.database}`;
  // The previous start's sockets may linger a moment after its exit.
  for (let waited = 0; (await portOpen(port)) || (await portOpen(port + 1)); waited += 100) {
    if (waited > 30_000) throw new Error(`port ${port} or ${port + 1} stays in use`);
    await sleep(100);
  }
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr += d;
  });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${p.name} (${mode}) exited ${child.exitCode}: ${stderr}`);
      if (await portOpen(port)) break;
      if (performance.now() - started > 120_000) throw new Error(`${p.name} (${mode}) did not listen in 120 s`);
      await sleep(10);
    }
    const ms = performance.now() - started;
    await sleep(2000);
    if (child.exitCode !== null)
      throw new Error(`${p.name} (${mode}) exited ${child.exitCode} after listening: ${stderr}`);
    return { ms, rss: rssMiB(child.pid ?? 0) };
  } finally {
    await new Promise<void>((done) => {
      if (child.exitCode !== null) return done();
      child.once("exit", () => done());
      child.kill("SIGTERM");
    });
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};

for (const p of PROCS) {
  if (!existsSync(join(ROOT, "dist", p.name, "main.js"))) {
    console.error(`dist/${p.name}/main.js is missing: run npm run build first`);
    process.exit(1);
  }
}

console.error(`node ${process.version}, ${RUNS} timed starts per process and mode (median), after one warm-up`);
const rows: string[] = [];
const HEADER = [
  "| process | startup tsx (ms) | startup compiled (ms) | compiled/tsx | RSS tsx (MiB) | RSS compiled (MiB) | compiled/tsx |",
  "|---|---|---|---|---|---|---|",
];
console.log(HEADER.join("\n"));
try {
  for (const [i, p] of PROCS.entries()) {
    if (ONLY.length > 0 && !ONLY.includes(p.name)) continue;
    const port = PORT_BASE + i * 10;
    const result: Record<string, { ms: number; rss: number }> = {};
    for (const mode of ["tsx", "compiled"] as const) {
      await startOnce(p, mode, port);
      const runs: { ms: number; rss: number }[] = [];
      for (let r = 0; r < RUNS; r++) runs.push(await startOnce(p, mode, port));
      result[mode] = { ms: median(runs.map((x) => x.ms)), rss: median(runs.map((x) => x.rss)) };
      console.error(`${p.name} ${mode}: ${runs.map((x) => Math.round(x.ms)).join(", ")} ms`);
    }
    const t = result.tsx as { ms: number; rss: number };
    const c = result.compiled as { ms: number; rss: number };
    const row = `| ${p.name} | ${Math.round(t.ms)} | ${Math.round(c.ms)} | ${(c.ms / t.ms).toFixed(2)} | ${t.rss.toFixed(0)} | ${c.rss.toFixed(0)} | ${(c.rss / t.rss).toFixed(2)} |`;
    // Each row as soon as it is measured, so an interrupted run keeps what it measured.
    console.log(row);
    rows.push(row);
  }
} finally {
  const client = new pg.Client({ connectionString: `${PG_URL}/postgres` });
  await client.connect();
  for (const db of new Set(PROCS.flatMap((p) => (p.database ? [p.database] : [])))) {
    await client.query(`DROP DATABASE IF EXISTS ${DB_PREFIX}${db} WITH (FORCE)`);
  }
  await client.end();
}
