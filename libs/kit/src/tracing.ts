import { ProxyTracerProvider, trace } from "@opentelemetry/api";

const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();

/**
 * True once a tracer provider is registered (startTelemetry with an exporter, or a test's).
 * Without one no span is made, so work done only to shape spans can be skipped.
 */
export function tracing(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== NOOP_TRACER_PROVIDER;
}
