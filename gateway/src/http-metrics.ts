import { boundHistogram, type HistogramSeries } from "@platform/kit/bound-histograms";
import type { FastifyInstance } from "fastify";

/**
 * RED metrics per route: the semantic-convention histogram http.server.request.duration
 * (seconds) labelled with the route template (never the raw path, whose ids would explode
 * the series), the method and the status code. Errors are the 4xx/5xx series.
 *
 * Recorded on every request, so each label set's series is looked up in maps of our own (route,
 * method, status) and bound once (kit's bound-histograms.ts says why not the SDK's histogram).
 */
export function installHttpMetrics(app: FastifyInstance): void {
  const duration = boundHistogram("@platform/gateway", "http.server.request.duration", {
    description: "Duration of HTTP requests served by the gateway",
    unit: "s",
    // The semantic conventions' buckets, in seconds (the SDK's default ones, 0 5 10 25 … 10000,
    // are made for milliseconds and would put every request in the first): among them 0.5, the
    // API latency SLO's threshold (deploy/prometheus/rules/platform-slos.yml).
    boundaries: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10],
  });
  // No meter provider (no METRICS_PORT, no OTLP endpoint): no per-request hook either.
  if (!duration) return;
  const byRoute = new Map<string, Map<string, Map<number, HistogramSeries>>>();
  const seriesOf = (route: string, method: string, status: number): HistogramSeries => {
    let byMethod = byRoute.get(route);
    if (!byMethod) {
      byMethod = new Map();
      byRoute.set(route, byMethod);
    }
    let byStatus = byMethod.get(method);
    if (!byStatus) {
      byStatus = new Map();
      byMethod.set(method, byStatus);
    }
    let series = byStatus.get(status);
    if (!series) {
      series = duration.seriesOf({
        "http.request.method": method,
        "http.route": route,
        "http.response.status_code": status,
      });
      byStatus.set(status, series);
    }
    return series;
  };
  app.addHook("onResponse", (request, reply, done) => {
    // Unmatched paths (404s) share one series.
    seriesOf(request.routeOptions.url ?? "unmatched", request.method, reply.statusCode).record(
      reply.elapsedTime / 1000,
    );
    done();
  });
}
