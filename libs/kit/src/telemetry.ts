import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { NodeSDK } from "@opentelemetry/sdk-node";

let sdk: NodeSDK | undefined;

/**
 * Starts OpenTelemetry before anything else. The standard OTEL_* variables apply; the OTLP
 * exporter is on only when OTEL_EXPORTER_OTLP_ENDPOINT (or the traces variant) is set, so a
 * developer's machine never retries exports to a collector that is not there.
 */
export function startTelemetry(defaultServiceName: string): void {
  if (sdk || process.env.OTEL_SDK_DISABLED === "true") return;
  process.env.OTEL_SERVICE_NAME ??= defaultServiceName;
  const exporting = Boolean(process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  // Without an endpoint the SDK must not fall back to its default OTLP exporter.
  if (!exporting) process.env.OTEL_TRACES_EXPORTER ??= "none";
  process.env.OTEL_METRICS_EXPORTER ??= "none";
  process.env.OTEL_LOGS_EXPORTER ??= "none";
  sdk = new NodeSDK(exporting ? { traceExporter: new OTLPTraceExporter() } : {});
  sdk.start();
}

export async function stopTelemetry(): Promise<void> {
  await sdk?.shutdown();
  sdk = undefined;
}
