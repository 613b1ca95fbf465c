import http from "node:http";
import { register } from "node:module";
import { context, metrics, propagation, trace } from "@opentelemetry/api";
import type { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import type { IMetricReader, MeterProvider } from "@opentelemetry/sdk-metrics";
import type { NodeSDK } from "@opentelemetry/sdk-node";
import { histogramProducer } from "./bound-histograms.js";
import { registerBuildInfoMetric } from "./build-info.js";
import { observeEventLoopDelay } from "./event-loop.js";
import { observeGc } from "./gc.js";
import { listenShared } from "./shared-port.js";

let sdk: NodeSDK | undefined;
/** The meter provider of a process that exports metrics and no traces (`startMetricsOnly`). */
let meterProvider: MeterProvider | undefined;
let metricsServer: http.Server | undefined;
/** What stops the event-loop monitor and the GC observer startTelemetry started. */
let runtimeObservers: (() => void)[] = [];

/**
 * The Prometheus reader with /metrics on a server of our own: the exporter's would bind the port
 * exclusively, and a replacement instance started beside this one (a rolling restart on one
 * machine, shared-port.ts) would then serve no metrics. A port it cannot bind is reported, not fatal.
 */
async function prometheusReader(port: number, host: string): Promise<PrometheusExporter> {
  const { PrometheusExporter } = await import("@opentelemetry/exporter-prometheus");
  const exporter = new PrometheusExporter({ preventServerStart: true, metricProducers: [histogramProducer] });
  metricsServer = http.createServer((req, res) => {
    if (req.url?.split("?")[0] === "/metrics") return exporter.getMetricsRequestHandler(req, res);
    res.writeHead(404).end();
  });
  listenShared(metricsServer, port, host).catch((err: Error) =>
    process.stderr.write(`metrics: cannot listen on ${host}:${port}: ${err.message}\n`),
  );
  return exporter;
}

/**
 * Starts OpenTelemetry before anything else is imported (entry points await it, then load the
 * rest with dynamic imports). Its modules are loaded here, and only those the configuration
 * needs. The standard OTEL_* variables apply (the SDK builds the
 * trace exporter from them: OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_PROTOCOL http/protobuf or
 * http/json, …); OTLP export is on only when OTEL_EXPORTER_OTLP_ENDPOINT (or the traces
 * variant) is set, so a developer's machine never retries exports to a collector that is not there.
 * OTEL_TRACES_EXPORTER=zipkin (with OTEL_EXPORTER_ZIPKIN_ENDPOINT) sends spans to a Zipkin
 * server in its own format: `npm run stack` sets both when scripts/observability.sh runs one.
 * Instrumented: outgoing `node:http` requests, pg and kafkajs; the webhook POST (undici) makes
 * its client span itself (services/webhooks/src/delivery/sender.ts); Connect calls
 * through kit's RPC interceptors (rpc-telemetry.ts) alone, and the gateway's REST requests
 * through its own server span (gateway/src/http-server-span.ts). Metrics: a Prometheus /metrics endpoint on
 * METRICS_PORT and OTLP export when an endpoint is set, with the build_info gauge (build-info.ts);
 * every reader also collects kit's bound histograms (bound-histograms.ts).
 *
 * What nobody reads costs nothing: with neither a trace exporter nor a metrics reader the SDK
 * is neither loaded nor started (the API stays no-op, and the RPC interceptors and HTTP metrics step
 * aside); with metrics only, the SDK's package is not loaded (`startMetricsOnly`), no
 * instrumentation is registered and no span is made. How many
 * traces are kept is the standard OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG (the SDK's
 * default keeps every one; parentbased_traceidratio with 0.1 keeps one request in ten unless
 * the caller's trace is sampled, and skips the attribute work of the others).
 *
 * Tracing at a 10% sample must cost the gateway at most 10% more CPU per read (issue 51;
 * docs/benchmarks/observability.md), so nothing that runs for every request is instrumented
 * by a generic instrumentation: the HTTP instrumentation's server side (its attributes, two
 * listener-binding wrappers and a histogram of its own for each request, sampled or not) gives
 * way to the gateway's own span, and Redis is not instrumented at all (the gateway's rate-limit
 * bucket syncs are its only Redis traffic, a hop no SRE follows).
 */
export interface TelemetryOptions {
  /**
   * Register the library instrumentations (outgoing HTTP, pg, kafkajs) and the module hooks
   * they patch through (default true). A process whose spans are all its own (the gateway: its
   * server span and the RPC interceptors) passes false: the hooks then cost nothing, where
   * they otherwise run on every `require` made after start-up (kafkajs loads a protocol
   * module on each request it sends) and wrap every produce and fetch.
   */
  instrumentLibraries?: boolean;
}

export async function startTelemetry(defaultServiceName: string, options: TelemetryOptions = {}): Promise<void> {
  if (sdk || meterProvider || process.env.OTEL_SDK_DISABLED === "true") return;
  process.env.OTEL_SERVICE_NAME ??= defaultServiceName;
  const exporting =
    Boolean(process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) ||
    zipkinExporter(process.env.OTEL_TRACES_EXPORTER);
  const exportingMetrics = Boolean(
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT,
  );
  // Without an endpoint the SDK must not fall back to its default OTLP exporter.
  if (!exporting) process.env.OTEL_TRACES_EXPORTER ??= "none";
  process.env.OTEL_METRICS_EXPORTER ??= "none";
  process.env.OTEL_LOGS_EXPORTER ??= "none";
  const metricReaders: IMetricReader[] = [];
  // Prometheus scrapes /metrics on METRICS_PORT (9464 in the images); unset or 0 leaves it
  // off, so that local processes and tests never fight over one port.
  const metricsPort = Number(process.env.METRICS_PORT ?? 0);
  if (Number.isInteger(metricsPort) && metricsPort > 0) {
    metricReaders.push(await prometheusReader(metricsPort, process.env.METRICS_HOST ?? "0.0.0.0"));
  }
  if (exportingMetrics) {
    const [{ OTLPMetricExporter }, { PeriodicExportingMetricReader }] = await Promise.all([
      import("@opentelemetry/exporter-metrics-otlp-proto"),
      import("@opentelemetry/sdk-metrics"),
    ]);
    metricReaders.push(
      new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter(), metricProducers: [histogramProducer] }),
    );
  }
  if (!exporting && metricReaders.length === 0) return;
  if (exporting) await startSdk(metricReaders, options.instrumentLibraries !== false);
  else meterProvider = await startMetricsOnly(metricReaders);
  registerBuildInfoMetric(process.env.OTEL_SERVICE_NAME ?? defaultServiceName);
  // Every process with a metrics reader exports its event-loop delay (an SRE's first saturation
  // signal) and its GC pauses (whether that delay was the collector's).
  if (metricReaders.length > 0) runtimeObservers = [observeEventLoopDelay(), observeGc()];
}

/** Traces (and metrics): the SDK, built from the standard OTEL_* variables. */
async function startSdk(metricReaders: IMetricReader[], instrumentLibraries: boolean): Promise<void> {
  if (instrumentLibraries) {
    // ESM modules are patched through import-in-the-middle's loader hook; CommonJS ones
    // (pg, kafkajs, redis) through require hooks the instrumentations install themselves.
    register("@opentelemetry/instrumentation/hook.mjs", import.meta.url);
  }
  const [{ NodeSDK }, instrumentations] = await Promise.all([
    import("@opentelemetry/sdk-node"),
    instrumentLibraries ? libraryInstrumentations() : [],
  ]);
  sdk = new NodeSDK({ metricReaders, instrumentations });
  sdk.start();
}

/**
 * Outgoing `node:http` requests, pg and kafkajs. The platform's own HTTP calls go through undici,
 * which this HTTP instrumentation does not patch: Connect's unary calls have the RPC
 * interceptors' spans, the webhook POST the sender's own.
 */
async function libraryInstrumentations() {
  const [{ HttpInstrumentation }, { PgInstrumentation }, { KafkaJsInstrumentation }] = await Promise.all([
    import("@opentelemetry/instrumentation-http"),
    import("@opentelemetry/instrumentation-pg"),
    import("@opentelemetry/instrumentation-kafkajs"),
  ]);
  return [
    new HttpInstrumentation({
      // Served requests: a service's ports speak Connect, whose server spans are the RPC
      // interceptors'; the gateway makes its own (above). Outgoing unary Connect calls go
      // through undici (unary-transport.ts), which this instrumentation does not patch:
      // their client spans are the RPC interceptors' alone.
      disableIncomingRequestInstrumentation: true,
    }),
    new PgInstrumentation(),
    new KafkaJsInstrumentation(),
  ];
}

/**
 * Metrics without traces, what every process runs with by default (METRICS_PORT in the images
 * and the stack): what the SDK's `start` sets up in that case, without loading the SDK. The
 * SDK's package loads every trace, metric and log exporter it could build (gRPC's among them)
 * whether or not one is configured: 265 ms of a process's start-up CPU against about 100 ms
 * for these (docs/benchmarks/events.md, "Start-up and the webhook POST"). Same globals as the SDK's: the
 * AsyncLocalStorage context manager, the propagators of OTEL_PROPAGATORS (W3C trace context
 * and baggage by default), and a meter provider whose resource comes from the same detectors
 * (env, process and host, or OTEL_NODE_RESOURCE_DETECTORS) and so the same `target_info` (a
 * unit test compares it with the SDK's).
 */
async function startMetricsOnly(readers: IMetricReader[]): Promise<MeterProvider> {
  const [{ AsyncLocalStorageContextManager }, core, resources, { MeterProvider }] = await Promise.all([
    import("@opentelemetry/context-async-hooks"),
    import("@opentelemetry/core"),
    import("@opentelemetry/resources"),
    import("@opentelemetry/sdk-metrics"),
  ]);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const propagators = (core.getStringListFromEnv("OTEL_PROPAGATORS") ?? ["tracecontext", "baggage"]).flatMap((name) => {
    if (name === "tracecontext") return [new core.W3CTraceContextPropagator()];
    if (name === "baggage") return [new core.W3CBaggagePropagator()];
    if (name !== "none") process.stderr.write(`telemetry: propagator "${name}" needs tracing on; ignored\n`);
    return [];
  });
  propagation.setGlobalPropagator(new core.CompositePropagator({ propagators }));
  const detectors = {
    host: resources.hostDetector,
    os: resources.osDetector,
    serviceinstance: resources.serviceInstanceIdDetector,
    process: resources.processDetector,
    env: resources.envDetector,
  };
  // The SDK's choice: env, process and host unless OTEL_NODE_RESOURCE_DETECTORS names others.
  const wanted = core.getStringListFromEnv("OTEL_NODE_RESOURCE_DETECTORS");
  const chosen =
    wanted === undefined
      ? [resources.envDetector, resources.processDetector, resources.hostDetector]
      : wanted.includes("all")
        ? Object.values(detectors)
        : wanted.includes("none")
          ? []
          : wanted.flatMap((name) => detectors[name as keyof typeof detectors] ?? []);
  const resource = resources.defaultResource().merge(resources.detectResources({ detectors: chosen }));
  const provider = new MeterProvider({ resource, readers });
  metrics.setGlobalMeterProvider(provider);
  return provider;
}

/** OTEL_TRACES_EXPORTER names Zipkin (the variable is a comma-separated list). */
function zipkinExporter(value: string | undefined): boolean {
  return (value ?? "").split(",").some((name) => name.trim() === "zipkin");
}

export async function stopTelemetry(): Promise<void> {
  for (const stop of runtimeObservers) stop();
  runtimeObservers = [];
  const server = metricsServer;
  metricsServer = undefined;
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server?.listening ? server.close(() => resolve()) : resolve()));
  if (sdk || meterProvider) {
    await (sdk ?? meterProvider)?.shutdown();
    // The SDK's shutdown leaves its providers registered as the API's globals, where they would
    // refuse the next registration (a later start, another meter provider in the same process)
    // and swallow what is recorded after: unregister what start registered.
    metrics.disable();
    trace.disable();
    context.disable();
    propagation.disable();
  }
  sdk = undefined;
  meterProvider = undefined;
}
