import http from "node:http";
import { context, propagation, SpanKind, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-base";
import { createLogger } from "@platform/kit/logger";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { API, buildTestGateway, ORG, SCHEDULE, type TestGateway } from "./harness.js";

// The gateway's own HTTP server span (http-server-span.ts), over real HTTP (a body read from the
// socket's stream events, as in production): parent-based sampling with ratio 0, as the
// observability infra test runs it, so that only a caller's sampled trace is recorded.

const spans = new InMemorySpanExporter();
const lines: Record<string, unknown>[] = [];
let gw: TestGateway;
let base: string;
let key: string;

const CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";

beforeAll(async () => {
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0) }),
      spanProcessors: [new SimpleSpanProcessor(spans)],
    }),
  );
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const logger = createLogger("gateway-test", "info", {
    write: (line: string) => {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    },
  });
  gw = await buildTestGateway({ logger });
  key = gw.identity.addToken({ orgId: ORG, scopes: ["smart-scheduling:read", "smart-scheduling:write"] });
  base = await gw.app.listen({ port: 0, host: "127.0.0.1" });
});
afterAll(async () => {
  await gw.app.close();
  trace.disable();
  context.disable();
  propagation.disable();
});
beforeEach(() => {
  spans.reset();
  lines.length = 0;
});

const accessLine = (requestId: string) => lines.find((l) => l.msg === "request" && l.requestId === requestId);

/**
 * A booking whose body arrives after its headers (written 50 ms later): fastify reads it from the
 * socket's stream events, outside the context the request started in.
 */
function book(headers: Record<string, string>): Promise<number> {
  const body = JSON.stringify({
    slotToken: gw.scheduling.slotToken(),
    attendee: { firstName: "Robin", lastName: "Ray", email: "robin@customer.example", timeZone: "Europe/London" },
    formValues: { region: "emea", seats: 12 },
    surveyResponses: { "What would you like to discuss?": "Onboarding" },
  });
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${API}/scheduled-meetings`, {
      method: "POST",
      headers: {
        "x-platform-api-key": key,
        "idempotency-key": `k-${Math.random()}`,
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(body)),
        ...headers,
      },
    });
    req.once("error", reject);
    req.once("response", (res) => {
      res.resume();
      res.once("end", () => resolve(res.statusCode ?? 0));
    });
    req.flushHeaders();
    setTimeout(() => req.end(body), 50);
  });
}

describe("the gateway's HTTP server span", () => {
  it("continues a caller's sampled trace: a SERVER span named after the route, the RPC calls its children", async () => {
    const status = await book({
      traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`,
      "x-request-id": "traced-booking",
    });
    expect(status).toBe(201);
    const finished = spans.getFinishedSpans();
    // The gateway's own (the fake services' SERVER spans are the RPC interceptors').
    const server = finished.filter((s) => s.instrumentationScope.name === "@platform/gateway");
    expect(server.map((s) => s.kind)).toEqual([SpanKind.SERVER]);
    expect(server.map((s) => s.name)).toEqual([`POST ${API}/scheduled-meetings`]);
    const span = server[0];
    expect(span?.spanContext().traceId).toBe(CALLER_TRACE);
    expect(span?.parentSpanContext?.spanId).toBe(CALLER_SPAN);
    expect(span?.attributes).toMatchObject({
      "http.route": `${API}/scheduled-meetings`,
      "http.request.method": "POST",
      "url.path": `${API}/scheduled-meetings`,
      "http.response.status_code": 201,
    });
    // BookMeeting is called after the body is read (stream events): still the span's child.
    const bookMeeting = finished.find((s) => s.kind === SpanKind.CLIENT && s.name.endsWith("/BookMeeting"));
    expect(bookMeeting?.parentSpanContext?.spanId).toBe(span?.spanContext().spanId);
    for (const s of finished) expect(s.spanContext().traceId).toBe(CALLER_TRACE);
    // The access line is logged inside the trace.
    expect(accessLine("traced-booking")).toMatchObject({ trace_id: CALLER_TRACE, status: 201 });
  });

  it("records nothing for a request that is not sampled, yet logs its own trace id", async () => {
    const res = await fetch(`${base}${API}/smart-schedules/${SCHEDULE}`, {
      headers: { "x-platform-api-key": key, "x-request-id": "unsampled-read" },
    });
    expect(res.status).toBe(200);
    expect(spans.getFinishedSpans()).toEqual([]);
    expect(accessLine("unsampled-read")?.trace_id).toMatch(/^[0-9a-f]{32}$/);
  });

  it("keeps a caller's unsampled trace id without recording a span", async () => {
    // The slot is taken by the first test's booking: a 409, after the body is read and BookMeeting called.
    const status = await book({
      traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-00`,
      "x-request-id": "unsampled-booking",
    });
    expect(status).toBe(409);
    expect(spans.getFinishedSpans()).toEqual([]);
    expect(accessLine("unsampled-booking")?.trace_id).toBe(CALLER_TRACE);
    // Its context is not entered, yet its call carries its trace on, unsampled.
    expect(gw.scheduling.traceparents.at(-1)).toMatch(new RegExp(`^00-${CALLER_TRACE}-[0-9a-f]{16}-00$`));
  });

  it("names an unmatched request by its method alone, never its path", async () => {
    const res = await fetch(`${base}${API}/no-such-route/${ORG}`, {
      headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
    });
    expect(res.status).toBe(404);
    const [span] = spans.getFinishedSpans().filter((s) => s.instrumentationScope.name === "@platform/gateway");
    expect(span?.name).toBe("GET");
    expect(span?.spanContext().traceId).toBe(CALLER_TRACE);
    expect(span?.attributes["http.route"]).toBeUndefined();
    expect(span?.attributes["http.response.status_code"]).toBe(404);
  });

  it("ends the span of a request whose client went away before its answer, marked aborted", async () => {
    // Headers and half a body, then the connection is closed: no answer is ever written.
    await new Promise<void>((resolve, reject) => {
      const req = http.request(`${base}${API}/scheduled-meetings`, {
        method: "POST",
        headers: {
          "x-platform-api-key": key,
          "idempotency-key": "k-aborted",
          "content-type": "application/json",
          "content-length": "100",
          traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`,
        },
      });
      req.once("error", () => resolve());
      req.once("response", () => reject(new Error("answered")));
      req.write('{"slotToken":');
      setTimeout(() => req.destroy(), 50);
    });
    await expect
      .poll(() => spans.getFinishedSpans().filter((s) => s.instrumentationScope.name === "@platform/gateway"))
      .toHaveLength(1);
    const [span] = spans.getFinishedSpans().filter((s) => s.instrumentationScope.name === "@platform/gateway");
    expect(span?.spanContext().traceId).toBe(CALLER_TRACE);
    expect(span?.attributes["error.type"]).toBe("aborted");
  });
});
