import { createClient, createContextValues } from "@connectrpc/connect";
import {
  context,
  metrics,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { Health } from "@platform/contracts/health";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { histogramProducer } from "../src/bound-histograms.js";
import { httpTransport, type RunningServer, serveConnect } from "../src/connect.js";
import { healthRoutes } from "../src/health.js";
import { callTrace } from "../src/rpc-telemetry.js";

class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const spans = new InMemorySpanExporter();
// With kit's bound histograms (rpc.*.duration, http.server.request.duration), as startTelemetry's readers have them.
const reader = new TestReader({ metricProducers: [histogramProducer] });
let server: RunningServer;
/** What the server's handler saw of the last call: the traceparent it was sent and its active trace. */
let seen: { traceparent: string | null; traceId: string | undefined } | undefined;

beforeAll(async () => {
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  server = await serveConnect({
    routes: healthRoutes({ name: "billing", serving: async () => true }),
    interceptors: [
      (next) => (req) => {
        seen = { traceparent: req.header.get("traceparent"), traceId: trace.getActiveSpan()?.spanContext().traceId };
        return next(req);
      },
    ],
    port: 0,
    host: "127.0.0.1",
  });
});
afterAll(async () => {
  await server.close();
  trace.disable();
  context.disable();
  propagation.disable();
  metrics.disable();
});

describe("Connect telemetry", () => {
  it("continues the caller's trace across an HTTP/2 call: caller → CLIENT span → SERVER span", async () => {
    spans.reset();
    const client = createClient(Health, httpTransport(`http://127.0.0.1:${server.port}`));
    const tracer = trace.getTracer("test");
    await tracer.startActiveSpan("gateway request", async (root) => {
      await client.check({ service: "billing" });
      root.end();
    });
    const finished = spans.getFinishedSpans();
    const root = finished.find((s) => s.name === "gateway request");
    const clientSpan = finished.find((s) => s.kind === SpanKind.CLIENT);
    const serverSpan = finished.find((s) => s.kind === SpanKind.SERVER);
    expect(clientSpan?.name).toBe("grpc.health.v1.Health/Check");
    expect(serverSpan?.name).toBe("grpc.health.v1.Health/Check");
    const traceId = root?.spanContext().traceId;
    expect(clientSpan?.spanContext().traceId).toBe(traceId);
    expect(serverSpan?.spanContext().traceId).toBe(traceId);
    expect(clientSpan?.parentSpanContext?.spanId).toBe(root?.spanContext().spanId);
    expect(serverSpan?.parentSpanContext?.spanId).toBe(clientSpan?.spanContext().spanId);
    expect(serverSpan?.attributes).toMatchObject({
      "rpc.system": "connect_rpc",
      "rpc.service": "grpc.health.v1.Health",
      "rpc.method": "Check",
      "rpc.connect_rpc.error_code": "ok",
    });
  });

  it("records a caller's mistake on the server span without marking it an error, and the RED histograms", async () => {
    spans.reset();
    const client = createClient(Health, httpTransport(`http://127.0.0.1:${server.port}`));
    await expect(client.check({ service: "shipping" })).rejects.toThrow();
    const serverSpan = spans.getFinishedSpans().find((s) => s.kind === SpanKind.SERVER);
    const clientSpan = spans.getFinishedSpans().find((s) => s.kind === SpanKind.CLIENT);
    expect(serverSpan?.attributes["rpc.connect_rpc.error_code"]).toBe("not_found");
    expect(serverSpan?.status.code).toBe(SpanStatusCode.UNSET);
    expect(clientSpan?.status.code).toBe(SpanStatusCode.ERROR);

    const { resourceMetrics } = await reader.collect();
    const histograms = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
    const serverDuration = histograms.find((m) => m.descriptor.name === "rpc.server.duration");
    const codes = serverDuration?.dataPoints.map((p) => p.attributes["rpc.connect_rpc.error_code"]);
    expect(codes).toEqual(expect.arrayContaining(["ok", "not_found"]));
    expect(histograms.map((m) => m.descriptor.name)).toContain("rpc.client.duration");
  });

  it("makes no span for a call of a trace that is not sampled, and carries its trace id along", async () => {
    spans.reset();
    const client = createClient(Health, httpTransport(`http://127.0.0.1:${server.port}`));
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const parentId = "00f067aa0ba902b7";
    const unsampled = trace.setSpanContext(context.active(), {
      traceId,
      spanId: parentId,
      traceFlags: TraceFlags.NONE,
    });
    await context.with(unsampled, () => client.check({ service: "billing" }));
    expect(spans.getFinishedSpans()).toEqual([]);
    expect(seen).toEqual({ traceparent: `00-${traceId}-${parentId}-00`, traceId });
    // Still measured.
    const { resourceMetrics } = await reader.collect();
    const names = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).map((m) => m.descriptor.name);
    expect(names).toEqual(expect.arrayContaining(["rpc.client.duration", "rpc.server.duration"]));
  });

  it("continues the trace a caller passes in contextValues (callTrace) when none is active", async () => {
    spans.reset();
    const client = createClient(Health, httpTransport(`http://127.0.0.1:${server.port}`));
    const traceId = "5bf92f3577b34da6a3ce929d0e0e4737";
    const parentId = "10f067aa0ba902b8";
    const unsampled = trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: parentId, traceFlags: TraceFlags.NONE });
    await client.check({ service: "billing" }, { contextValues: createContextValues().set(callTrace, unsampled) });
    expect(spans.getFinishedSpans()).toEqual([]);
    expect(seen).toEqual({ traceparent: `00-${traceId}-${parentId}-00`, traceId });
    // An active span wins over the one passed: a call made inside a recorded span is its child.
    const tracer = trace.getTracer("test");
    await tracer.startActiveSpan("recorded", async (root) => {
      await client.check({ service: "billing" }, { contextValues: createContextValues().set(callTrace, unsampled) });
      root.end();
    });
    const clientSpan = spans.getFinishedSpans().find((s) => s.kind === SpanKind.CLIENT);
    expect(clientSpan?.spanContext().traceId).not.toBe(traceId);
    expect(seen?.traceId).toBe(clientSpan?.spanContext().traceId);
  });
});
