import type { IncomingHttpHeaders } from "node:http";
import {
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  trace,
} from "@opentelemetry/api";
import { tracing } from "@platform/kit/tracing";
import type { FastifyInstance, FastifyRequest } from "fastify";

declare module "fastify" {
  interface FastifyRequest {
    /** The request's trace context (its server span) while tracing, null otherwise. */
    traceContext: Context | null;
  }
}

const getter: TextMapGetter<IncomingHttpHeaders> = {
  keys: (headers) => Object.keys(headers),
  get: (headers, key) => headers[key],
};

/**
 * The gateway's HTTP server span: one SERVER span per request, continuing the caller's W3C
 * `traceparent`, named after the route template as the HTTP semantic conventions ask
 * (`http.route` = "/api/v1alpha1/scheduled-meetings/:id", name "GET /api/v1alpha1/…"; the
 * template, never the path, whose ids would make every trace its own operation).
 *
 * Our own rather than the HTTP instrumentation's because of what it costs (issue 51: tracing at
 * a 10% sample may add at most 10% to the gateway's CPU per read): the instrumentation builds
 * every request's attributes, wraps the listeners of its request and response and records a
 * histogram of its own, for the nine requests in ten that are not sampled as for the tenth.
 * Here a request that is not sampled costs the sampling decision, its (non-recording) span and
 * entering its context; attributes are set only on a recording span.
 *
 * A recorded span's context is entered where fastify's lifecycle starts (onRequest, so the
 * admission's key look-ups are its children) and again where it resumes from a stream event
 * outside it: after the body is read (preValidation) and when the response has finished
 * (onResponse, so that its log lines carry the trace id).
 *
 * An unrecorded one's (nine requests in ten at a 10% ratio) is not entered: an entered context
 * travels with every promise, tick and timer of the request, which cost the gateway about 4% of
 * a read's CPU (docs/benchmarks/observability.md). Its trace id still goes wherever it is needed,
 * explicitly from `request.traceContext`: to the access line, and to every call the request makes
 * (kit's `withCallTrace`: the route's call options in guard.ts, the admission's key and
 * delegation look-ups), which send it on unsampled.
 */
export function installHttpServerSpan(app: FastifyInstance): void {
  // Without a tracer provider there is no span to make: no hook at all.
  if (!tracing()) return;
  const tracer = trace.getTracer("@platform/gateway");
  app.decorateRequest("traceContext", null);
  // The headers the propagators read (traceparent, tracestate, baggage by default): a request
  // with none of them (most of an integrator's) has nothing to extract.
  const fields = propagation.fields();
  const carriesTrace = (headers: IncomingHttpHeaders): boolean => {
    for (const field of fields) if (headers[field] !== undefined) return true;
    return false;
  };
  const names = new Map<string, Map<string, string>>();
  /** "GET /api/v1alpha1/…", made once per route and method. */
  const nameOf = (method: string, route: string | undefined): string => {
    if (!route) return method;
    let byMethod = names.get(route);
    if (!byMethod) {
      byMethod = new Map();
      names.set(route, byMethod);
    }
    let name = byMethod.get(method);
    if (name === undefined) {
      name = `${method} ${route}`;
      byMethod.set(method, name);
    }
    return name;
  };

  /** The request's span, started (`startTime`: when it arrived) and entered into a context. */
  const start = (request: FastifyRequest, startTime?: number): Context => {
    const parent = carriesTrace(request.headers)
      ? propagation.extract(ROOT_CONTEXT, request.headers, getter)
      : ROOT_CONTEXT;
    const route = request.routeOptions.url;
    const span = tracer.startSpan(
      nameOf(request.method, route),
      startTime === undefined ? { kind: SpanKind.SERVER } : { kind: SpanKind.SERVER, startTime },
      parent,
    );
    if (span.isRecording()) {
      const raw = request.raw;
      span.setAttributes({
        "http.request.method": request.method,
        "url.scheme": "http",
        "url.path": raw.url?.split("?", 1)[0] ?? "/",
        "network.protocol.version": raw.httpVersion,
        "network.peer.address": raw.socket?.remoteAddress ?? "",
        "client.address": request.ip,
      });
      if (route) span.setAttribute("http.route", route);
      const agent = request.headers["user-agent"];
      if (agent) span.setAttribute("user_agent.original", agent);
      // A client that goes away before its answer gets no onResponse: its span ends here. A
      // listener on the recorded tenth only, rather than fastify's onRequestAbort hook, which
      // adds one to every request (1–2 % of a read's CPU, docs/benchmarks/observability.md).
      raw.once("close", () => {
        if (!raw.aborted || !span.isRecording()) return;
        span.setAttribute("error.type", "aborted");
        span.setStatus({ code: SpanStatusCode.ERROR, message: "the client closed the connection" });
        span.end();
      });
    }
    const active = trace.setSpan(parent, span);
    request.traceContext = active;
    return active;
  };

  app.addHook("onRequest", (request, _reply, done) => {
    const active = start(request);
    if (!recording(active)) return done();
    context.with(active, done);
  });

  // A body is read from stream events, which run outside the request's context: the handler
  // that follows runs in it again (without a body, this hook is already inside it).
  app.addHook("preValidation", (request, _reply, done) => {
    const active = request.traceContext;
    if (!active || context.active() === active || !recording(active)) return done();
    context.with(active, done);
  });

  app.addHook("onResponse", (request, reply, done) => {
    // A request answered by an onRequest hook that runs before ours (a path no route serves,
    // errors.ts) gets its span now, from the moment it arrived.
    const active = request.traceContext ?? start(request, Date.now() - reply.elapsedTime);
    const span = trace.getSpan(active);
    const recorded = span?.isRecording() === true;
    if (span && recorded) {
      span.setAttribute("http.response.status_code", reply.statusCode);
      // Server errors only: a 4xx is the caller's mistake, not the span's failure.
      if (reply.statusCode >= 500) {
        span.setAttribute("error.type", String(reply.statusCode));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
    }
    span?.end();
    // The hooks after this one (the access log) log inside a recorded request's trace.
    if (!recorded) return done();
    context.with(active, done);
  });
}

/** The context's span is recorded (sampled). */
function recording(active: Context): boolean {
  return trace.getSpan(active)?.isRecording() === true;
}
