// What observability costs the gateway (issue 51: at most 10% more CPU per proxied read with
// tracing at a 10% sample and Prometheus scraping every 15 s), measured side by side: two more
// gateways of the stack's own build, started with the stack gateway's command line, working
// directory and environment (its /proc entries), that differ in telemetry alone:
//   - nothing configured: no OTEL_* variable, no METRICS_PORT (the SDK is never started);
//   - tracing 10% + scraping: spans to Zipkin (OTEL_TRACES_EXPORTER=zipkin, sampler
//     parentbased_traceidratio, ratio 0.1) and a /metrics port that Prometheus scrapes every 15 s.
// Zipkin and Prometheus are scripts/observability.sh's (ZIPKIN_PORT, PROMETHEUS_PORT,
// PROMETHEUS_SCRAPE_INTERVAL), started when they do not run and then stopped after, only then.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { portOpen, sleep, stackPid } from "../bench-support.js";
import { env, log, RUN_DIR } from "./stack.js";

export const TRACE_RATIO = "0.1";

export interface TelemetryGateway {
  name: string;
  /** Its CPU column in the report. */
  column: string;
  url: string;
  pid: number | undefined;
}

const ZIPKIN_PORT = env.ZIPKIN_PORT ?? "9411";
const PROMETHEUS_PORT = env.PROMETHEUS_PORT ?? "9090";

/** A port nothing listens on now (the kernel's pick). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const observability = (...args: string[]) =>
  execFileSync("bash", ["scripts/observability.sh", ...args], { stdio: ["ignore", "inherit", "inherit"] });

/** The running stack gateway's command line, working directory and environment. */
function stackGateway(): { argv: string[]; cwd: string; env: Record<string, string> } {
  const pid = stackPid(RUN_DIR, "gateway");
  if (pid === undefined) throw new Error(`no running gateway in ${RUN_DIR}`);
  const split = (file: string) => readFileSync(`/proc/${pid}/${file}`, "utf8").split("\0").filter(Boolean);
  const environment: Record<string, string> = {};
  for (const entry of split("environ")) {
    const at = entry.indexOf("=");
    if (at > 0) environment[entry.slice(0, at)] = entry.slice(at + 1);
  }
  return { argv: split("cmdline"), cwd: readlinkSync(`/proc/${pid}/cwd`), env: environment };
}

export class TelemetryGateways {
  private readonly children: ChildProcess[] = [];
  private readonly markDir = mkdtempSync(join(tmpdir(), "bench-observability-"));
  private readonly targets = `bench-distributed-${process.pid}`;
  private observabilityStarted = false;

  /** Starts Zipkin and Prometheus (when not running) and the two gateways; resolves once both answer. */
  async start(): Promise<{ plain: TelemetryGateway; traced: TelemetryGateway }> {
    log("observability: Zipkin and Prometheus (scripts/observability.sh start)…");
    observability("start", "--mark", join(this.markDir, "started"));
    this.observabilityStarted = true;
    const base = stackGateway();
    // Nothing of the stack's own telemetry settings: each gateway gets exactly its own.
    const clean = Object.fromEntries(
      Object.entries(base.env).filter(([k]) => !k.startsWith("OTEL_") && k !== "METRICS_PORT"),
    );
    const metricsPort = await freePort();
    const plain = await this.spawnGateway("gateway, nothing configured", "gw plain", base, { ...clean });
    const traced = await this.spawnGateway(
      `gateway, tracing ${Number(TRACE_RATIO) * 100}% + scraping`,
      "gw traced",
      base,
      {
        ...clean,
        OTEL_TRACES_EXPORTER: "zipkin",
        OTEL_EXPORTER_ZIPKIN_ENDPOINT: `http://127.0.0.1:${ZIPKIN_PORT}/api/v2/spans`,
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: TRACE_RATIO,
        METRICS_PORT: String(metricsPort),
        METRICS_HOST: "127.0.0.1",
      },
    );
    observability("targets", this.targets, `gateway-bench=${metricsPort}`);
    await this.scraped();
    return { plain, traced };
  }

  private async spawnGateway(
    name: string,
    column: string,
    base: { argv: string[]; cwd: string },
    environment: Record<string, string>,
  ): Promise<TelemetryGateway> {
    const port = await freePort();
    const id = `bench-${column.replace(" ", "-")}-${process.pid}`;
    const [command, ...args] = base.argv as [string, ...string[]];
    const child = spawn(command, args, {
      cwd: base.cwd,
      env: {
        ...environment,
        PORT: String(port),
        HOST: "127.0.0.1",
        // Its own cache-purge consumer group and Kafka member id: it takes nothing of the stack gateway's.
        GATEWAY_INSTANCE_ID: id,
        KAFKA_GROUP_INSTANCE_ID: id,
      },
      stdio: ["ignore", "ignore", "inherit"],
    });
    this.children.push(child);
    const url = `http://127.0.0.1:${port}`;
    for (let waited = 0; !(await portOpen(url)); waited += 250) {
      if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode} while starting`);
      if (waited > 120_000) throw new Error(`${name} did not listen on ${port} within 120 s`);
      await sleep(250);
    }
    log(`${name}: ready on ${url} (pid ${child.pid})`);
    return { name, column, url, pid: child.pid };
  }

  /** Waits (up to 60 s) until Prometheus has scraped the traced gateway once: the row measures a scraped process. */
  private async scraped(): Promise<void> {
    for (let waited = 0; waited < 60_000; waited += 1000) {
      const res = await fetch(`http://127.0.0.1:${PROMETHEUS_PORT}/api/v1/targets?state=active`).catch(() => undefined);
      const body = (await res?.json().catch(() => undefined)) as
        | { data?: { activeTargets?: { labels: Record<string, string>; health: string }[] } }
        | undefined;
      if (body?.data?.activeTargets?.some((t) => t.labels.source === this.targets && t.health === "up")) {
        log("observability: Prometheus scrapes the traced gateway");
        return;
      }
      await sleep(1000);
    }
    throw new Error(`Prometheus on ${PROMETHEUS_PORT} did not scrape the traced gateway within 60 s`);
  }

  /** Synchronous, so that it also runs on the way out of a failed run. */
  stop(): void {
    for (const child of this.children) child.kill();
    if (!this.observabilityStarted) return;
    this.observabilityStarted = false;
    try {
      observability("targets", this.targets);
      observability("stop", "--if-marked", join(this.markDir, "started"));
    } finally {
      rmSync(this.markDir, { recursive: true, force: true });
    }
  }
}
