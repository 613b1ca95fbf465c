import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { eventually } from "@platform/kit/testing";
import { sandboxKeysOffline, sandboxScheduleId } from "@platform/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { basePort, KAFKA_BROKERS, runId, STACK_START_TIMEOUT_MS, type Stack, startStack } from "./support/processes.js";

// One booking, one trace, across processes: every process exports its spans over OTLP/JSON
// to a collector this test runs in memory. The trace must read gateway HTTP span → Connect
// client span → scheduling's server span → its pg spans; the outbox relay's Kafka produce
// span continuing the same trace from the row's stored traceparent; and the webhook
// delivery worker's delivery span continuing it again, up to the receiver's POST.

const run = runId();
const seed = `tr-${run}`;
const contextSecret = "tr-context-secret-0123456789";
const port = basePort(7);
const ports = {
  identity: port,
  admin: port + 1,
  scheduling: port + 2,
  gateway: port + 3,
  webhooks: port + 4,
  delivery: port + 5,
};
let stack: Stack | undefined;

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: Record<string, unknown> }[];
}
interface Span extends OtlpSpan {
  service: string;
  scope: string;
}

const SERVER = 2;
const CLIENT = 3;
const PRODUCER = 4;

/** The webhook receiver: records the trace context each delivery arrives with. */
const received: { traceparent: string | undefined; body: { type: string; data: { meeting?: { id: string } } } }[] = [];
let receiver: Server;

/** The in-memory collector: OTLP/HTTP JSON in, spans kept in an array. */
const spans: Span[] = [];
let collector: Server;

function collect(body: string): void {
  const doc = JSON.parse(body) as {
    resourceSpans?: {
      resource?: { attributes?: { key: string; value: { stringValue?: string } }[] };
      scopeSpans?: { scope?: { name?: string }; spans?: OtlpSpan[] }[];
    }[];
  };
  for (const rs of doc.resourceSpans ?? []) {
    const service = rs.resource?.attributes?.find((a) => a.key === "service.name")?.value.stringValue ?? "?";
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) spans.push({ ...s, service, scope: ss.scope?.name ?? "?" });
    }
  }
}

const attr = (s: Span, key: string) => {
  const v = s.attributes?.find((a) => a.key === key)?.value;
  return v ? Object.values(v)[0] : undefined;
};

function telemetryEnv(): Record<string, string> {
  const { port: p } = collector.address() as AddressInfo;
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${p}`,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_BSP_SCHEDULE_DELAY: "100",
    OTEL_METRIC_EXPORT_INTERVAL: "600000",
  };
}

beforeAll(async () => {
  collector = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => {
      if (req.url === "/v1/traces") collect(body);
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve));
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => {
      received.push({ traceparent: req.headers.traceparent as string | undefined, body: JSON.parse(body) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  // Private targets allowed: the receiver is this test's plain-HTTP server on 127.0.0.1.
  const webhooks = { WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true", WEBHOOKS_POLL_MS: "100" };
  stack = await startStack({
    name: "platform_tr",
    run,
    env: { PLATFORM_CONTEXT_SECRET: contextSecret, SANDBOX_SEED: seed, KAFKA_BROKERS, ...telemetryEnv() },
    processes: [
      {
        name: "identity",
        entry: "services/identity/src/main.ts",
        database: "id",
        port: ports.identity,
        env: { PORT: String(ports.identity), ADMIN_PORT: String(ports.admin) },
      },
      {
        name: "scheduling",
        entry: "services/scheduling/src/main.ts",
        database: "sched",
        port: ports.scheduling,
        env: { PORT: String(ports.scheduling) },
      },
      {
        name: "webhooks",
        entry: "services/webhooks/src/main.ts",
        database: "wh",
        port: ports.webhooks,
        env: { ...webhooks, PORT: String(ports.webhooks) },
      },
      {
        name: "webhooks-delivery",
        entry: "services/webhooks/src/delivery-main.ts",
        database: "wh",
        port: ports.delivery,
        env: { ...webhooks, DELIVERY_PORT: String(ports.delivery), WEBHOOKS_CONSUMER_GROUP: `tr-delivery-${run}` },
      },
      {
        name: "gateway",
        entry: "gateway/src/main.ts",
        port: ports.gateway,
        env: {
          PORT: String(ports.gateway),
          HOST: "127.0.0.1",
          IDENTITY_URL: `http://127.0.0.1:${ports.identity}`,
          SCHEDULING_URL: `http://127.0.0.1:${ports.scheduling}`,
          WEBHOOKS_URL: `http://127.0.0.1:${ports.webhooks}`,
        },
      },
    ],
  });
}, STACK_START_TIMEOUT_MS);

afterAll(async () => {
  await stack?.stop();
  await new Promise((resolve) => collector?.close(resolve));
  await new Promise((resolve) => receiver?.close(resolve));
});

describe("end-to-end tracing", () => {
  it("follows a booking from the gateway through Connect, Postgres, the outbox and Kafka to the webhook delivery in one trace", async () => {
    const key = sandboxKeysOffline(seed).find((k) => k.name === "acme-full")?.key ?? "";
    const api = `http://127.0.0.1:${ports.gateway}/api/v1alpha1`;
    const headers = { "content-type": "application/json", "x-platform-api-key": key };
    const { port: receiverPort } = receiver.address() as AddressInfo;
    const subscribed = await fetch(`${api}/webhook-subscriptions`, {
      method: "POST",
      headers: { ...headers, "idempotency-key": `sub-${run}` },
      body: JSON.stringify({
        endpointUrl: `http://127.0.0.1:${receiverPort}/hooks`,
        events: ["scheduling.smartscheduler.booked"],
      }),
    });
    expect(subscribed.status, await subscribed.clone().text()).toBe(201);
    const formValues = { region: "AMER" };
    const availability = await fetch(`${api}/smart-schedules/${sandboxScheduleId(seed, "acme-intro")}/availability`, {
      method: "POST",
      headers,
      body: JSON.stringify({ formValues }),
    });
    expect(availability.status).toBe(200);
    const groups = (await availability.json()) as { hostGroups: { slots: { slotToken: string }[] }[][] };
    const slotToken = groups.hostGroups.flat().find((h) => h.slots.length > 0)?.slots[0]?.slotToken;
    const booked = await fetch(`${api}/scheduled-meetings`, {
      method: "POST",
      headers: { ...headers, "idempotency-key": `trace-${run}` },
      body: JSON.stringify({
        slotToken,
        attendee: { email: "trace.me@example.com", firstName: "Trace", lastName: "Me" },
        formValues,
        surveyResponses: { "What would you like to discuss?": "Tracing" },
      }),
    });
    expect(booked.status).toBe(201);

    const serverSpan = await eventually("the scheduling server span of BookMeeting", () =>
      spans.find(
        (s) =>
          s.service === "scheduling" &&
          s.kind === SERVER &&
          s.name === "platform.scheduling.v1.MeetingService/BookMeeting",
      ),
    );
    const trace = () => spans.filter((s) => s.traceId === serverSpan.traceId);
    const byId = (id?: string) => trace().find((s) => s.spanId === id);
    const produce = await eventually("the Kafka produce span of the booked event", () =>
      trace().find((s) => s.service === "scheduling" && s.kind === PRODUCER),
    );

    const clientSpan = await eventually("the gateway's client span", () => byId(serverSpan.parentSpanId));
    expect(clientSpan).toMatchObject({ service: "gateway", kind: CLIENT, name: serverSpan.name });
    // Up from the client span: the gateway's HTTP server span of POST /scheduled-meetings.
    let root: Span | undefined = clientSpan;
    while (root?.parentSpanId && byId(root.parentSpanId)) root = byId(root.parentSpanId);
    expect(root).toMatchObject({ service: "gateway", kind: SERVER });
    expect(String(attr(root as Span, "url.path") ?? attr(root as Span, "http.target"))).toContain(
      "/scheduled-meetings",
    );

    // The queries (pool checkouts, pg.connect, may be parented to whichever request opened the connection).
    // Some descend through spans still open when they are collected (the notifier consuming the booked event in
    // this same process: its queries end before its consumer span does), so each chain is awaited, not read once.
    const pgSpans = trace().filter((s) => s.service === "scheduling" && s.name.startsWith("pg.query"));
    expect(pgSpans.length).toBeGreaterThan(0);
    const descends = (s: Span): true | undefined => {
      let up: Span | undefined = s;
      while (up && up.spanId !== serverSpan.spanId) up = byId(up.parentSpanId);
      return up ? true : undefined;
    };
    for (const s of pgSpans) await eventually(`pg span ${s.name} to descend from the server span`, () => descends(s));
    expect(String(attr(produce, "messaging.destination.name") ?? produce.name)).toContain("platform.scheduling.v1");
    expect(produce.parentSpanId).toBe(serverSpan.spanId);

    // The delivery: its span continues the booking's trace from the Kafka produce, and the POST to the receiver
    // carries that trace onward in its traceparent header.
    const meetingId = ((await booked.json()) as { id: string }).id;
    const delivery = await eventually("the webhook delivery span", () =>
      trace().find(
        (s) => s.service === "webhooks-delivery" && s.name === "webhook.deliver scheduling.smartscheduler.booked",
      ),
    );
    expect(delivery.kind).toBe(CLIENT);
    // The Kafka message carried the produce span's context (kafkajs instrumentation).
    expect(delivery.parentSpanId).toBe(produce.spanId);
    expect(attr(delivery, "webhook.event_type")).toBe("scheduling.smartscheduler.booked");
    const post = await eventually("the delivery's HTTP POST span", () =>
      trace().find((s) => s.service === "webhooks-delivery" && s.parentSpanId === delivery.spanId && s.kind === CLIENT),
    );
    const hit = await eventually("the delivery at the receiver", () =>
      received.find((r) => r.body.data.meeting?.id === meetingId),
    );
    expect(hit.traceparent?.split("-")[1]).toBe(serverSpan.traceId);
    expect(hit.traceparent?.split("-")[2]).toBe(post.spanId);
  });
});
