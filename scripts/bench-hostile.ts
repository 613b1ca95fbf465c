// npm run bench -- --suite hostile: the gateway's memory under stalled keyless uploads.
//
// Starts the gateway as a process of its own (node --import tsx gateway/src/main.ts, no Redis,
// no Kafka; the services need not run: a request without a key never reaches them), reads its
// resident memory (VmRSS, /proc/<pid>/status) at rest, then opens --sockets connections that
// each declare a --declared byte JSON body without an API key, send --sent bytes of it and
// stall. It samples the RSS every 250 ms while they are held (--hold seconds) and for --after
// seconds once they are closed, and prints the baseline, the peak, the RSS --after seconds
// later, how many sockets the gateway answered or closed, and its CPU.
//
// --root runs the gateway of another checkout (e.g. a worktree of main, its node_modules
// linked to this one's) for a before/after in the same conditions. Extra gateway settings go
// through the environment as usual (KEYLESS_CONNECTIONS_PER_ADDRESS=0 measures without the
// per-address cap).
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { dirname, resolve } from "node:path";
import { cpuMsOf, loadAverage, portOpen, sleep, stringFlags, suiteArgs, wholeNumber } from "./bench-support.js";

const USAGE = `usage: npm run bench -- --suite hostile [--sockets N] [--declared BYTES] [--sent BYTES]
                     [--hold SECONDS] [--after SECONDS] [--port PORT] [--root DIR]

400 keyless uploads that declare 1 MB, send 900 KB and stall, against a gateway process of its own;
its RSS before, at the peak, and after they close.
  --sockets N        stalled connections (default 400)
  --declared BYTES   the Content-Length each declares (default 1048576)
  --sent BYTES       what each sends before stalling (default 921600)
  --hold SECONDS     how long they stay stalled (default 15)
  --after SECONDS    how long the RSS is followed after they close (default 10)
  --port PORT        the gateway's port (default 34600)
  --root DIR         the checkout whose gateway runs (default this one)`;

const values = suiteArgs(
  stringFlags({
    sockets: "400",
    declared: "1048576",
    sent: "921600",
    hold: "15",
    after: "10",
    port: "34600",
    root: resolve(dirname(new URL(import.meta.url).pathname), ".."),
  }),
  USAGE,
);
const sockets = wholeNumber("sockets", values.sockets);
const declared = wholeNumber("declared", values.declared);
const sent = wholeNumber("sent", values.sent, 0);
const holdMs = wholeNumber("hold", values.hold) * 1000;
const afterMs = wholeNumber("after", values.after) * 1000;
const port = wholeNumber("port", values.port);
const root = resolve(values.root);

function rssMiB(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  return kb / 1024;
}

async function startGateway(): Promise<ChildProcess> {
  if (await portOpen(port)) throw new Error(`port ${port} is taken`);
  const child = spawn(process.execPath, ["--import", "tsx", "gateway/src/main.ts"], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn", ACCESS_LOG: "false" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  for (let waited = 0; !(await portOpen(port)); waited += 100) {
    if (child.exitCode !== null || waited > 60_000) throw new Error("the gateway did not start");
    await sleep(100);
  }
  return child;
}

/** One stalled upload: headers, `sent` bytes, then nothing. Tracks whether the gateway answered or closed. */
function stall(outcome: { answered: number; closed: number }): Socket {
  const socket = connect({ port, host: "127.0.0.1" });
  let answered = false;
  socket.on("data", () => {
    if (!answered) outcome.answered++;
    answered = true;
  });
  socket.on("close", () => outcome.closed++);
  socket.on("error", () => {});
  socket.once("connect", () => {
    socket.write(
      `POST /api/v1alpha1/deals HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
        `content-length: ${declared}\r\nidempotency-key: bench\r\n\r\n`,
    );
    socket.write(Buffer.alloc(sent, 0x20));
  });
  return socket;
}

const gateway = await startGateway();
const pid = gateway.pid ?? 0;
try {
  await sleep(3_000);
  const rest: number[] = [];
  for (let i = 0; i < 8; i++, await sleep(250)) rest.push(rssMiB(pid));
  const baseline = Math.min(...rest);
  const cpuBefore = cpuMsOf(pid);
  const outcome = { answered: 0, closed: 0 };
  const open = Array.from({ length: sockets }, () => stall(outcome));
  let peak = baseline;
  for (let t = 0; t < holdMs; t += 250, await sleep(250)) peak = Math.max(peak, rssMiB(pid));
  const held = { answered: outcome.answered, closedByGateway: outcome.closed };
  for (const s of open) s.destroy();
  const closedAt = Date.now();
  let backAfterMs: number | undefined;
  let last = peak;
  for (let t = 0; t <= afterMs; t += 250, await sleep(250)) {
    last = rssMiB(pid);
    peak = Math.max(peak, last);
    // "Back": within 5 MiB of the baseline.
    if (backAfterMs === undefined && last <= baseline + 5) backAfterMs = Date.now() - closedAt;
  }
  const cpu = cpuMsOf(pid) - cpuBefore;
  const report = {
    root,
    sockets,
    declared,
    sent,
    baselineMiB: +baseline.toFixed(1),
    peakMiB: +peak.toFixed(1),
    riseMiB: +(peak - baseline).toFixed(1),
    [`rssAfter${afterMs / 1000}sMiB`]: +last.toFixed(1),
    backWithin5MiBAfterMs: backAfterMs ?? null,
    answeredWhileStalled: held.answered,
    closedByGatewayWhileStalled: held.closedByGateway,
    gatewayCpuMs: Math.round(cpu),
    loadAverage: loadAverage(),
  };
  console.log(JSON.stringify(report, null, 2));
  const ok = peak - baseline <= 32 && last <= baseline + 5;
  console.log(ok ? "PASS: at most 32 MiB more, and back to the baseline" : "FAIL: over 32 MiB, or not back");
  if (!ok) process.exitCode = 1;
} finally {
  gateway.kill("SIGTERM");
  await new Promise((r) => gateway.once("exit", r));
}
