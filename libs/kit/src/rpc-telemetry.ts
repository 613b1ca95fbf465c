import {
  type CallOptions,
  Code,
  ConnectError,
  createContextKey,
  createContextValues,
  type Interceptor,
} from "@connectrpc/connect";
import {
  type Context,
  context,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type TextMapSetter,
  TraceFlags,
  trace,
} from "@opentelemetry/api";
import { type BoundHistogram, boundHistogram, DEFAULT_BOUNDARIES, type HistogramSeries } from "./bound-histograms.js";
import { tracing } from "./tracing.js";

// OpenTelemetry for Connect: the HTTP instrumentation does not see HTTP/2 (and is told to leave
// the unary calls made over HTTP/1.1 alone, telemetry.ts), and no maintained Connect-ES
// instrumentation exists, so these interceptors follow the OTel RPC conventions:
// one CLIENT span per call and one SERVER span per handled call, W3C trace context carried in
// the request headers (gRPC metadata), and the RED histograms rpc.client.duration and
// rpc.server.duration labelled by service, method and Connect code.

const SCOPE = "@platform/kit/rpc";

/**
 * The trace a client call belongs to when it is not the active context's: a caller that does not
 * enter an unsampled request's context (the gateway, http-server-span.ts: entering it costs every
 * async step of the request) passes it in the call's `contextValues`, and the call carries its
 * trace id, unsampled, as it would from inside the context.
 */
export const callTrace = createContextKey<Context | undefined>(undefined, { description: "the call's trace context" });

/** `options` with `trace` as its call's trace (callTrace); unchanged without one. */
export function withCallTrace(options: CallOptions, trace: Context | null | undefined): CallOptions {
  if (!trace) return options;
  return { ...options, contextValues: (options.contextValues ?? createContextValues()).set(callTrace, trace) };
}

const getter: TextMapGetter<Headers> = {
  keys: (h) => [...h.keys()],
  get: (h, key) => h.get(key) ?? undefined,
};
const setter: TextMapSetter<Headers> = { set: (h, key, value) => h.set(key, value) };

type Next = Parameters<Interceptor>[0];

interface CallShape {
  service: { typeName: string };
  method: { name: string };
}

/**
 * Each method's series of the RED histogram, bound once per outcome (kit's bound-histograms.ts
 * says why): a call records into the series it finds on its method's entry.
 */
interface MethodSeries {
  ok: HistogramSeries;
  failed: Map<string, HistogramSeries>;
}

function seriesOf(histogram: BoundHistogram, cache: WeakMap<object, MethodSeries>, req: CallShape, failure: unknown) {
  let entry = cache.get(req.method);
  if (!entry) {
    entry = { ok: histogram.seriesOf({ ...attributes(req), "rpc.connect_rpc.error_code": "ok" }), failed: new Map() };
    cache.set(req.method, entry);
  }
  if (failure === undefined) return entry.ok;
  const code = codeOf(failure);
  let series = entry.failed.get(code);
  if (!series) {
    series = histogram.seriesOf({ ...attributes(req), "rpc.connect_rpc.error_code": code });
    entry.failed.set(code, series);
  }
  return series;
}

/** The context's span is one of a trace that is not sampled (no span at all: a new trace, which the sampler decides). */
function notSampled(ctx: Context): boolean {
  const span = trace.getSpan(ctx);
  return span !== undefined && (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0;
}

/**
 * Whether the SDK's sampler follows the parent's decision (OTEL_TRACES_SAMPLER parentbased_*, or
 * unset: the SDK's default is parentbased_always_on); only then may a call of an unsampled trace
 * skip its span. Read when an interceptor is made: after startTelemetry, as the SDK read it.
 */
function samplerIsParentBased(): boolean {
  return (process.env.OTEL_TRACES_SAMPLER ?? "parentbased_always_on").trim().startsWith("parentbased_");
}

function attributes(req: CallShape) {
  return { "rpc.system": "connect_rpc", "rpc.service": req.service.typeName, "rpc.method": req.method.name };
}

/** The Connect code name of a failure ("ok" on success), the label of the RED metrics. */
function codeOf(err: unknown): string {
  if (err === undefined) return "ok";
  const code = ConnectError.from(err).code;
  return Code[code]?.replace(/[A-Z]/g, (c, i) => (i === 0 ? c.toLowerCase() : `_${c.toLowerCase()}`)) ?? "unknown";
}

/** A client call's parent: the active context's span, else the trace its caller passed (callTrace). */
function clientParent(given: Context | undefined): Context {
  const active = context.active();
  return given === undefined || trace.getSpan(active) !== undefined ? active : given;
}

/** Server-side failures (not the caller's mistakes) mark the span as an error. */
const SERVER_FAULTS = new Set([Code.Internal, Code.Unknown, Code.Unavailable, Code.DataLoss, Code.DeadlineExceeded]);

function finish(span: Span, err: unknown, kind: SpanKind): void {
  const code = codeOf(err);
  span.setAttribute("rpc.connect_rpc.error_code", code);
  if (err !== undefined) {
    const ce = ConnectError.from(err);
    if (kind === SpanKind.CLIENT || SERVER_FAULTS.has(ce.code)) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: ce.rawMessage });
    }
  }
  span.end();
}

function instrument(kind: SpanKind.SERVER | SpanKind.CLIENT): Interceptor {
  const side = kind === SpanKind.SERVER ? "server" : "client";
  // A meter provider is registered before the processes build their transports (telemetry
  // starts first); without one, and without a tracer provider, the call goes straight through.
  const duration = boundHistogram(SCOPE, `rpc.${side}.duration`, {
    description: `Duration of Connect RPCs (${side} side)`,
    unit: "ms",
    boundaries: DEFAULT_BOUNDARIES,
  });
  const series = new WeakMap<object, MethodSeries>();
  const record = (req: CallShape, failure: unknown, ms: number) => {
    if (duration) seriesOf(duration, series, req, failure).record(ms);
  };
  const parentBased = samplerIsParentBased();
  /** The call measured, without a span of its own (no async frame: it runs for every call). */
  const measured = (next: Next, req: Parameters<Next>[0]): ReturnType<Next> => {
    if (!duration) return next(req);
    const started = performance.now();
    return next(req).then(
      (res) => {
        record(req, undefined, performance.now() - started);
        return res;
      },
      (err: unknown) => {
        record(req, err, performance.now() - started);
        throw err;
      },
    );
  };
  return (next) => (req) => {
    if (!tracing()) return measured(next, req);
    const parent =
      kind === SpanKind.SERVER
        ? propagation.extract(context.active(), req.header, getter)
        : clientParent(req.contextValues.get(callTrace));
    if (parentBased && notSampled(parent)) {
      // A trace that is not sampled (nine requests in ten at a 10% ratio) records nothing: no
      // span of its own, the same trace id carried on (CLIENT) or its context entered (SERVER),
      // so that log lines and further calls keep it. The parent-based sampler would have
      // decided the same for any child span.
      if (kind === SpanKind.CLIENT) {
        propagation.inject(parent, req.header, setter);
        return measured(next, req);
      }
      return context.with(parent, measured, undefined, next, req);
    }
    return traced(next, req, parent);
  };

  /** The call with a span of its own (a sampled trace's, or a new trace's). */
  async function traced(next: Next, req: Parameters<Next>[0], parent: Context): ReturnType<Next> {
    const tracer = trace.getTracer(SCOPE);
    const attrs = attributes(req);
    const span = tracer.startSpan(
      `${attrs["rpc.service"]}/${attrs["rpc.method"]}`,
      { kind, attributes: attrs },
      parent,
    );
    const active = trace.setSpan(parent, span);
    if (kind === SpanKind.CLIENT) propagation.inject(active, req.header, setter);
    const started = performance.now();
    let failure: unknown;
    try {
      return await context.with(active, () => next(req));
    } catch (err) {
      failure = err;
      throw err;
    } finally {
      record(req, failure, performance.now() - started);
      finish(span, failure, kind);
    }
  }
}

/** Server side: continues the caller's trace and measures every handled RPC. */
export const serverTelemetryInterceptor = (): Interceptor => instrument(SpanKind.SERVER);

/** Client side: a span per call, its context sent along in the headers. */
export const clientTelemetryInterceptor = (): Interceptor => instrument(SpanKind.CLIENT);
