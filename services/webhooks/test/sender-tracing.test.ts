import { context, propagation, SpanKind, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpSender, systemResolver } from "../src/delivery/sender.js";
import { startReceiver } from "./builders.js";

const spans = new InMemorySpanExporter();
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const send = httpSender({ allowPrivateTargets: true, resolve: systemResolver, timeoutMs: 2000 });

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  trace.disable();
  context.disable();
  propagation.disable();
});

describe("the webhook POST's span", () => {
  it("without tracing: no span, no traceparent sent", async () => {
    expect(await send({ url: receiver.url, headers: {}, body: "{}" })).toMatchObject({ status: 200 });
    expect(receiver.received.at(-1)?.headers.traceparent).toBeUndefined();
  });

  it("with tracing: a client span under the delivery's, whose context the receiver gets in traceparent", async () => {
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
    const delivery = trace.getTracer("test").startSpan("webhook.deliver test");
    receiver.replies.push({ status: 503 });
    const outcome = await context.with(trace.setSpan(context.active(), delivery), () =>
      send({ url: receiver.url, headers: {}, body: "{}" }),
    );
    delivery.end();
    expect(outcome).toMatchObject({ status: 503 });
    const post = spans.getFinishedSpans().find((s) => s.name === "POST");
    expect(post).toBeDefined();
    expect(post?.kind).toBe(SpanKind.CLIENT);
    expect(post?.parentSpanContext?.spanId).toBe(delivery.spanContext().spanId);
    expect(post?.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.response.status_code": 503,
      "server.address": "127.0.0.1",
    });
    const { traceId, spanId } = post?.spanContext() ?? {};
    expect(receiver.received.at(-1)?.headers.traceparent).toBe(`00-${traceId}-${spanId}-01`);
  });
});
