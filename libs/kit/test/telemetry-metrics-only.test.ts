import { createServer } from "node:net";
import { context, createContextKey, metrics, propagation, trace } from "@opentelemetry/api";
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { afterEach, describe, expect, it } from "vitest";
import { startTelemetry, stopTelemetry } from "../src/telemetry.js";

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/** The `target_info` line of a /metrics answer: the resource, as Prometheus sees it. */
async function targetInfo(port: number): Promise<string> {
  const metricsText = () =>
    fetch(`http://127.0.0.1:${port}/metrics`).then(
      (r) => r.text(),
      () => "",
    );
  await expect.poll(metricsText).toMatch(/target_info/);
  const line = (await metricsText()).split("\n").find((l) => l.startsWith("target_info{")) ?? "";
  // A random id per start, by design.
  return line.replace(/service_instance_id="[^"]*"/, 'service_instance_id="…"');
}

describe("telemetry with metrics only (no trace exporter)", () => {
  afterEach(async () => {
    await stopTelemetry();
    delete process.env.METRICS_PORT;
    delete process.env.METRICS_HOST;
  });

  it("serves the resource the SDK would, and registers the SDK's context manager and propagators", async () => {
    const port = await freePort();
    process.env.METRICS_PORT = String(port);
    process.env.METRICS_HOST = "127.0.0.1";
    process.env.OTEL_SERVICE_NAME = "metrics-only-test";
    await startTelemetry("metrics-only-test");
    const ours = await targetInfo(port);
    expect(ours).toContain('service_name="metrics-only-test"');
    expect(ours).toContain("process_pid=");
    expect(ours).toContain("host_name=");
    // Context travels through async work, as with the SDK's AsyncLocalStorage manager.
    const key = createContextKey("metrics-only-test");
    const seen = await context.with(context.active().setValue(key, 42), async () => {
      await new Promise((r) => setTimeout(r, 1));
      return context.active().getValue(key);
    });
    expect(seen).toBe(42);
    expect(propagation.fields()).toEqual(["traceparent", "tracestate", "baggage"]);
    // No tracer provider: spans stay no-op.
    expect(trace.getTracer("t").startSpan("s").isRecording()).toBe(false);
    await stopTelemetry();

    // The SDK itself, with the same reader, in the same process.
    const sdkPort = await freePort();
    const sdk = new NodeSDK({ metricReaders: [new PrometheusExporter({ port: sdkPort, host: "127.0.0.1" })] });
    sdk.start();
    try {
      expect(await targetInfo(sdkPort)).toBe(ours);
      expect(propagation.fields()).toEqual(["traceparent", "tracestate", "baggage"]);
    } finally {
      await sdk.shutdown();
      metrics.disable();
      trace.disable();
      context.disable();
      propagation.disable();
      delete process.env.OTEL_SERVICE_NAME;
    }
  });
});
