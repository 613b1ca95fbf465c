import { createNoopMeter, metrics } from "@opentelemetry/api";
import type { FastifyInstance } from "fastify";

/**
 * RED metrics per route: the semantic-convention histogram http.server.request.duration
 * (seconds) labelled with the route template (never the raw path, whose ids would explode
 * the series), the method and the status code. Errors are the 4xx/5xx series.
 */
export function installHttpMetrics(app: FastifyInstance): void {
  const meter = metrics.getMeter("@platform/gateway");
  // No meter provider (no METRICS_PORT, no OTLP endpoint): no per-request hook either.
  if (meter === createNoopMeter()) return;
  const duration = meter.createHistogram("http.server.request.duration", {
    description: "Duration of HTTP requests served by the gateway",
    unit: "s",
  });
  app.addHook("onResponse", (request, reply, done) => {
    duration.record(reply.elapsedTime / 1000, {
      "http.request.method": request.method,
      // Unmatched paths (404s) share one series.
      "http.route": request.routeOptions.url ?? "unmatched",
      "http.response.status_code": reply.statusCode,
    });
    done();
  });
}
