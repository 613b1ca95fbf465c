import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "@platform/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bookTraced, startReceiver } from "../scripts/observability/trace-booking.js";
import { basePort, KAFKA_BROKERS, runId, STACK_START_TIMEOUT_MS, type Stack, startStack } from "./support/processes.js";

// What an SRE sees, through the real backends that scripts/observability.sh runs (started here
// when they are not running, stopped after only then): one integrator's booking is one trace in
// Zipkin, from the gateway to the webhook receiver, with no span missing its parent; sampling is
// parent-based (ratio 0 here: only the integrator's sampled trace is kept); and Prometheus scrapes
// every process, whose series an SRE alerts on exist with bounded labels.

const run = runId();
const seed = `obs-${run}`;
const port = basePort(11);
const ZIPKIN = `http://127.0.0.1:${process.env.ZIPKIN_PORT ?? 9411}`;
const PROMETHEUS = `http://127.0.0.1:${process.env.PROMETHEUS_PORT ?? 9090}`;
const ports = {
  identity: port,
  admin: port + 1,
  scheduling: port + 2,
  gateway: port + 3,
  webhooks: port + 4,
  delivery: port + 5,
  requestLogs: port + 11,
};
const metricsPorts = {
  gateway: port + 6,
  identity: port + 7,
  scheduling: port + 8,
  webhooks: port + 9,
  "webhooks-delivery": port + 10,
  "request-logs": port + 12,
};
const targetsName = `obs-test-${run}`;
const markDir = mkdtempSync(join(tmpdir(), "obs-test-"));
const mark = join(markDir, "observability.started");
const script = (...args: string[]) =>
  execFileSync("bash", ["scripts/observability.sh", ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });

let stack: Stack | undefined;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

interface ZipkinSpan {
  traceId: string;
  id: string;
  parentId?: string;
  name: string;
  kind?: "CLIENT" | "SERVER" | "PRODUCER" | "CONSUMER";
  localEndpoint?: { serviceName?: string };
  tags?: Record<string, string>;
}

async function zipkinTrace(traceId: string): Promise<ZipkinSpan[]> {
  const res = await fetch(`${ZIPKIN}/api/v2/trace/${traceId}`);
  if (res.status === 404) return [];
  expect(res.status).toBe(200);
  return (await res.json()) as ZipkinSpan[];
}

async function promQuery(query: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
  const res = await fetch(`${PROMETHEUS}/api/v1/query?query=${encodeURIComponent(query)}`);
  const body = (await res.json()) as { status: string; data: { result: never[] } };
  expect(body.status).toBe("success");
  return body.data.result;
}

beforeAll(async () => {
  // Fetches the Zipkin jar and installs prometheus on first use (CI: once per machine).
  script("start", "--mark", mark);
  receiver = await startReceiver();
  const webhooks = { WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true", WEBHOOKS_POLL_MS: "100" };
  const metricsPort = (name: keyof typeof metricsPorts) => ({ METRICS_PORT: String(metricsPorts[name]) });
  stack = await startStack({
    name: "platform_obs",
    run,
    env: {
      SANDBOX_SEED: seed,
      KAFKA_BROKERS,
      // The SDK's standard settings, as `npm run stack` gives them when Zipkin runs.
      OTEL_TRACES_EXPORTER: "zipkin",
      OTEL_EXPORTER_ZIPKIN_ENDPOINT: `${ZIPKIN}/api/v2/spans`,
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0",
      OTEL_BSP_SCHEDULE_DELAY: "100",
    },
    processes: [
      {
        name: "identity",
        entry: "services/identity/src/main.ts",
        database: "id",
        port: ports.identity,
        env: { PORT: String(ports.identity), ADMIN_PORT: String(ports.admin), ...metricsPort("identity") },
      },
      {
        name: "scheduling",
        entry: "services/scheduling/src/main.ts",
        database: "sched",
        port: ports.scheduling,
        env: { PORT: String(ports.scheduling), ...metricsPort("scheduling") },
      },
      {
        name: "webhooks",
        entry: "services/webhooks/src/main.ts",
        database: "wh",
        port: ports.webhooks,
        env: { ...webhooks, PORT: String(ports.webhooks), ...metricsPort("webhooks") },
      },
      {
        name: "webhooks-delivery",
        entry: "services/webhooks/src/delivery-main.ts",
        database: "wh",
        port: ports.delivery,
        env: {
          ...webhooks,
          DELIVERY_PORT: String(ports.delivery),
          WEBHOOKS_CONSUMER_GROUP: `obs-delivery-${run}`,
          ...metricsPort("webhooks-delivery"),
        },
      },
      {
        // The request log: the gateway's summaries reach it through Kafka; its target is up too.
        name: "request-logs",
        entry: "services/request-logs/src/main.ts",
        database: "rl",
        port: ports.requestLogs,
        env: {
          PORT: String(ports.requestLogs),
          REQUEST_LOGS_CONSUMER_GROUP: `obs-request-logs-${run}`,
          ...metricsPort("request-logs"),
        },
      },
      {
        name: "gateway",
        entry: "gateway/src/main.ts",
        port: ports.gateway,
        env: {
          PORT: String(ports.gateway),
          HOST: "127.0.0.1",
          // The access log is an info line.
          LOG_LEVEL: "info",
          IDENTITY_URL: `http://127.0.0.1:${ports.identity}`,
          SCHEDULING_URL: `http://127.0.0.1:${ports.scheduling}`,
          WEBHOOKS_URL: `http://127.0.0.1:${ports.webhooks}`,
          REQUEST_LOGS_URL: `http://127.0.0.1:${ports.requestLogs}`,
          ...metricsPort("gateway"),
        },
      },
    ],
  });
  script("targets", targetsName, ...Object.entries(metricsPorts).map(([name, p]) => `${name}=${p}`));
}, STACK_START_TIMEOUT_MS);

afterAll(async () => {
  try {
    script("targets", targetsName);
  } catch {
    // The backends never started: nothing to remove.
  }
  await stack?.stop();
  await receiver?.close();
  script("stop", "--if-marked", mark);
  rmSync(markDir, { recursive: true, force: true });
});

describe("observability through Zipkin and Prometheus", () => {
  it("shows an integrator's booking as one trace in Zipkin, from the gateway to the webhook receiver", async () => {
    const gateway = `http://127.0.0.1:${ports.gateway}`;
    const booking = await bookTraced({ gateway, seed, receiverUrl: receiver.url, run });
    const { traceId, parentSpanId } = booking;

    const delivered = await eventually("the delivery at the receiver", () =>
      receiver.received.find((d) => d.body.data.meeting?.id === booking.meetingId),
    );
    // Every hop is exported (each process sends its spans in its own 100 ms batches): wait until the
    // delivery's POST and the consume span are there and no span waits for its parent.
    const spans = await eventually(
      "the booking's whole trace in Zipkin",
      async () => {
        const found = await zipkinTrace(traceId);
        const ids = new Set(found.map((s) => s.id));
        const whole = found.every((s) => s.parentId === parentSpanId || ids.has(s.parentId ?? ""));
        const last = ids.has(delivered.traceparent?.split("-")[2] ?? "") && found.some((s) => s.kind === "CONSUMER");
        return whole && last ? found : undefined;
      },
      30_000,
      250,
    );
    const byId = new Map(spans.map((s) => [s.id, s]));
    const service = (s: ZipkinSpan) => s.localEndpoint?.serviceName;
    const one = (what: string, pred: (s: ZipkinSpan) => boolean) => {
      const found = spans.filter(pred);
      expect(
        found.length,
        `${what} in ${JSON.stringify(spans.map((s) => [service(s), s.kind, s.name]))}`,
      ).toBeGreaterThan(0);
      return found[0] as ZipkinSpan;
    };

    // No span with a missing parent: the only parent outside the trace is the integrator's own span.
    for (const s of spans) {
      if (s.parentId !== parentSpanId)
        expect(byId.has(s.parentId ?? ""), `${service(s)} ${s.name}'s parent`).toBe(true);
    }
    const roots = spans.filter((s) => s.parentId === parentSpanId);
    expect(roots.map((s) => [service(s), s.kind])).toEqual([["gateway", "SERVER"]]);
    const root = roots[0] as ZipkinSpan;
    expect(root.tags?.["http.route"]).toBe("/api/v1alpha1/scheduled-meetings");
    expect(root.name).toBe("post /api/v1alpha1/scheduled-meetings");

    // Gateway → scheduling over Connect: client and server spans of BookMeeting.
    const client = one(
      "the gateway's RPC client span",
      (s) => service(s) === "gateway" && s.kind === "CLIENT" && s.name.endsWith("/bookmeeting"),
    );
    expect(client.parentId).toBe(root.id);
    const server = one("scheduling's RPC server span", (s) => service(s) === "scheduling" && s.kind === "SERVER");
    expect(server.parentId).toBe(client.id);
    // Postgres: the booking's queries under the server span.
    // (Scheduling's own notifier consumes the booked event too: its queries hang under its consume span.)
    const queries = spans.filter((s) => service(s) === "scheduling" && s.name.startsWith("pg.query"));
    expect(queries.filter((q) => q.parentId === server.id).length).toBeGreaterThan(0);
    // The outbox relay's Kafka produce continues the booking from the row's stored trace context.
    const produce = one("the Kafka produce span", (s) => service(s) === "scheduling" && s.kind === "PRODUCER");
    expect(produce.tags?.["messaging.destination.name"]).toBe("platform.scheduling.v1");
    expect(produce.parentId).toBe(server.id);
    // The webhook fan-out consumes it: a CONSUMER span whose parent is the produce span.
    const consume = one(
      "the fan-out's consume span",
      (s) => service(s) === "webhooks-delivery" && s.kind === "CONSUMER",
    );
    expect(consume.parentId).toBe(produce.id);
    expect(consume.tags?.["messaging.operation.type"]).toBe("process");
    expect(consume.tags?.["messaging.consumer.group.name"]).toBe(`obs-delivery-${run}`);
    // The delivery and its POST, which carried the trace to the receiver.
    const deliver = one(
      "the delivery span",
      (s) => service(s) === "webhooks-delivery" && s.name === "webhook.deliver scheduling.smartscheduler.booked",
    );
    expect(deliver.parentId).toBe(produce.id);
    const post = one("the delivery's POST", (s) => s.parentId === deliver.id && s.kind === "CLIENT");
    expect(service(post)).toBe("webhooks-delivery");
    expect(delivered.traceparent).toBe(`00-${traceId}-${post.id}-01`);
    expect([...new Set(spans.map(service))]).toEqual(
      expect.arrayContaining(["gateway", "scheduling", "webhooks-delivery"]),
    );

    // The gateway's access log line of the booking carries the trace id.
    const access = stack
      ?.get("gateway")
      .output()
      .split("\n")
      .filter((l) => l.includes(traceId));
    expect(
      access?.some((l) => {
        const entry = JSON.parse(l) as { route?: string; method?: string; trace_id?: string };
        return (
          entry.method === "POST" && entry.route === "/api/v1alpha1/scheduled-meetings" && entry.trace_id === traceId
        );
      }),
    ).toBe(true);

    // Parent-based with ratio 0: a request without a sampled traceparent is not kept, though
    // its access line has a trace id of its own.
    const unsampled = await fetch(`${gateway}/api/v1alpha1/scheduled-meetings/${booking.meetingId}`, {
      headers: { "x-platform-api-key": "sk_test_not_a_key", "x-request-id": `obs-unsampled-${run}` },
    });
    expect(unsampled.status).toBe(401);
    const line = await eventually("the unsampled request's access line", () =>
      stack
        ?.get("gateway")
        .output()
        .split("\n")
        .find((l) => l.includes(`"requestId":"obs-unsampled-${run}"`)),
    );
    const otherTrace = (JSON.parse(line) as { trace_id?: string }).trace_id;
    expect(otherTrace).toMatch(/^[0-9a-f]{32}$/);
    expect(otherTrace).not.toBe(traceId);
    // Exported after the booking's spans if it were kept (the same 100 ms batches): give it time.
    await new Promise((r) => setTimeout(r, 1500));
    expect(await zipkinTrace(otherTrace as string)).toEqual([]);
  });

  it("has Prometheus scrape every process, with the series an SRE alerts on and bounded labels", async () => {
    const jobs = Object.keys(metricsPorts);
    let seen: unknown;
    await eventually(
      "every process's target up in Prometheus",
      async () => {
        const res = await fetch(`${PROMETHEUS}/api/v1/targets?state=active`);
        const body = (await res.json()) as {
          data: { activeTargets: { labels: Record<string, string>; health: string; lastError?: string }[] };
        };
        const ours = body.data.activeTargets.filter((t) => t.labels.source === targetsName);
        seen = ours;
        return ours.length === jobs.length && ours.every((t) => t.health === "up") ? ours : undefined;
      },
      60_000,
      500,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; targets: ${JSON.stringify(seen)}`);
    });
    const required: Record<string, string[]> = {
      // RED per route and per RPC.
      http_server_request_duration_count: ["gateway"],
      rpc_client_duration_count: ["gateway"],
      rpc_server_duration_count: ["scheduling", "webhooks", "identity"],
      // Outbox backlog size and age.
      outbox_pending: ["scheduling"],
      outbox_lag: ["scheduling"],
      // Kafka consumer lag per group.
      kafka_consumer_lag: ["webhooks-delivery"],
      // Webhook delivery success, latency, freshness and backlog.
      webhooks_delivery_outcomes_total: ["webhooks-delivery"],
      webhooks_delivery_duration_count: ["webhooks-delivery"],
      webhooks_delivery_freshness_count: ["webhooks-delivery"],
      webhooks_delivery_backlog: ["webhooks-delivery"],
      webhooks_delivery_backlog_age: ["webhooks-delivery"],
      // Database pool saturation.
      db_pool_connections_used: ["identity", "scheduling", "webhooks", "webhooks-delivery"],
      db_pool_connections_max: ["identity", "scheduling", "webhooks", "webhooks-delivery"],
      db_pool_requests_waiting: ["identity", "scheduling", "webhooks", "webhooks-delivery"],
      // Event-loop delay, everywhere.
      nodejs_eventloop_delay_max: jobs,
    };
    // Scraped every 15 s: the series of the booking above appear within a scrape or two.
    await eventually(
      "every required series in Prometheus",
      async () => {
        const result = await promQuery(`count by (__name__, job) ({source="${targetsName}"})`);
        const have = new Set(result.map((r) => `${r.metric.__name__} ${r.metric.job}`));
        const missing = Object.entries(required).flatMap(([name, of]) =>
          of.filter((job) => !have.has(`${name} ${job}`)).map((job) => `${name} ${job}`),
        );
        return missing.length === 0 ? true : undefined;
      },
      60_000,
      1000,
    );
    // Bounded cardinality: no label names an organization, user, key, token or subscription.
    const series = await promQuery(`{source="${targetsName}"}`);
    const labels = new Set(series.flatMap((s) => Object.keys(s.metric)));
    for (const label of labels) expect(label).not.toMatch(/org|user|key|token|subscription|tenant/i);
    for (const s of series) {
      for (const value of Object.values(s.metric)) expect(value).not.toMatch(/^(org|usr|tok|whs|mtg)_/);
    }
    // The rules are loaded: the SLO recording rules evaluate (no error) in this Prometheus.
    const rules = (await (await fetch(`${PROMETHEUS}/api/v1/rules`)).json()) as {
      data: { groups: { name: string; rules: { health: string }[] }[] };
    };
    const names = rules.data.groups.map((g) => g.name);
    expect(names).toEqual(
      expect.arrayContaining(["slo-api-availability", "slo-api-latency", "slo-webhook-freshness", "platform-health"]),
    );
  });
});
