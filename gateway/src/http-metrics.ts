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
    // The semantic conventions' buckets, in seconds (the SDK's default ones, 0 5 10 25 … 10000,
    // are made for milliseconds and would put every request in the first): among them 0.5, the
    // API latency SLO's threshold (deploy/prometheus/rules/platform-slos.yml).
    advice: { explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10] },
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
