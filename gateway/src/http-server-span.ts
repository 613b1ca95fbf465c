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
 * The context is entered where fastify's lifecycle starts (onRequest, so the admission's key
 * look-ups are its children) and again where it resumes from a stream event outside it: after
 * the body is read (preValidation) and when the response has finished (onResponse, so that the
 * access log line carries the trace id, sampled or not).
 */
export function installHttpServerSpan(app: FastifyInstance): void {
  // Without a tracer provider there is no span to make: no hook at all.
  if (!tracing()) return;
  const tracer = trace.getTracer("@platform/gateway");
  app.decorateRequest("traceContext", null);

  /** The request's span, started (`startTime`: when it arrived) and entered into a context. */
  const start = (request: FastifyRequest, startTime?: number): Context => {
    const parent = propagation.extract(ROOT_CONTEXT, request.headers, getter);
    const route = request.routeOptions.url;
    const span = tracer.startSpan(
      route ? `${request.method} ${route}` : request.method,
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
    }
    const active = trace.setSpan(parent, span);
    request.traceContext = active;
    return active;
  };

  app.addHook("onRequest", (request, _reply, done) => {
    context.with(start(request), done);
  });

  // A body is read from stream events, which run outside the request's context: the handler
  // that follows runs in it again (without a body, this hook is already inside it).
  app.addHook("preValidation", (request, _reply, done) => {
    const active = request.traceContext;
    if (!active || context.active() === active) return done();
    context.with(active, done);
  });

  app.addHook("onResponse", (request, reply, done) => {
    // A request answered by an onRequest hook that runs before ours (a path no route serves,
    // errors.ts) gets its span now, from the moment it arrived.
    const active = request.traceContext ?? start(request, Date.now() - reply.elapsedTime);
    const span = trace.getSpan(active);
    if (span?.isRecording()) {
      span.setAttribute("http.response.status_code", reply.statusCode);
      // Server errors only: a 4xx is the caller's mistake, not the span's failure.
      if (reply.statusCode >= 500) {
        span.setAttribute("error.type", String(reply.statusCode));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
    }
    span?.end();
    // The hooks after this one (the access log) log inside the request's trace.
    context.with(active, done);
  });

  // A client that goes away before its answer gets no onResponse: its span ends here.
  app.addHook("onRequestAbort", (request, done) => {
    const span = request.traceContext && trace.getSpan(request.traceContext);
    if (span?.isRecording()) {
      span.setAttribute("error.type", "aborted");
      span.setStatus({ code: SpanStatusCode.ERROR, message: "the client closed the connection" });
    }
    span?.end();
    done();
  });
}
