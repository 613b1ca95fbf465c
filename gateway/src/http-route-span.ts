import { context, trace } from "@opentelemetry/api";
import { tracing } from "@platform/kit/tracing";
import type { FastifyInstance } from "fastify";

/**
 * Names the gateway's HTTP server span after its route template, as the HTTP semantic
 * conventions ask: `http.route` = "/api/v1alpha1/scheduled-meetings/:id" and the name
 * "POST /api/v1alpha1/scheduled-meetings" instead of a bare "POST". The template, never the
 * path: ids in span names would make every trace its own operation in a tracing backend.
 */
export function installHttpRouteSpan(app: FastifyInstance): void {
  // Without a tracer provider there is no span to name: no hook at all.
  if (!tracing()) return;
  app.addHook("onRequest", (request, _reply, done) => {
    const span = trace.getSpan(context.active());
    const route = request.routeOptions.url;
    if (span && route) {
      span.setAttribute("http.route", route);
      span.updateName(`${request.method} ${route}`);
    }
    done();
  });
}
