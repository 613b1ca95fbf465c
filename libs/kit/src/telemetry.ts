import { register } from "node:module";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { KafkaJsInstrumentation } from "@opentelemetry/instrumentation-kafkajs";
import { PgInstrumentation } from "@opentelemetry/instrumentation-pg";
import { RedisInstrumentation } from "@opentelemetry/instrumentation-redis";
import { NodeSDK } from "@opentelemetry/sdk-node";

let sdk: NodeSDK | undefined;

/**
 * Starts OpenTelemetry before anything else is imported (entry points load the rest with
 * dynamic imports after this call). The standard OTEL_* variables apply; the OTLP exporter
 * is on only when OTEL_EXPORTER_OTLP_ENDPOINT (or the traces variant) is set, so a
 * developer's machine never retries exports to a collector that is not there.
 * Instrumented: HTTP (the gateway's server side, HTTP/2 Connect calls), pg, kafkajs, redis.
 */
export function startTelemetry(defaultServiceName: string): void {
  if (sdk || process.env.OTEL_SDK_DISABLED === "true") return;
  process.env.OTEL_SERVICE_NAME ??= defaultServiceName;
  const exporting = Boolean(process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  // Without an endpoint the SDK must not fall back to its default OTLP exporter.
  if (!exporting) process.env.OTEL_TRACES_EXPORTER ??= "none";
  process.env.OTEL_METRICS_EXPORTER ??= "none";
  process.env.OTEL_LOGS_EXPORTER ??= "none";
  // ESM modules are patched through import-in-the-middle's loader hook; CommonJS ones
  // (pg, kafkajs, redis) through require hooks the instrumentations install themselves.
  register("@opentelemetry/instrumentation/hook.mjs", import.meta.url);
  sdk = new NodeSDK({
    ...(exporting ? { traceExporter: new OTLPTraceExporter() } : {}),
    instrumentations: [
      new HttpInstrumentation(),
      new PgInstrumentation(),
      new KafkaJsInstrumentation(),
      new RedisInstrumentation(),
    ],
  });
  sdk.start();
}

export async function stopTelemetry(): Promise<void> {
  await sdk?.shutdown();
  sdk = undefined;
}
