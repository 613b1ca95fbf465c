import { metrics } from "@opentelemetry/api";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { histogramProducer } from "@platform/kit/bound-histograms";
import { seededId } from "@platform/kit/ids";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API, buildTestGateway, get, ORG, PARTNER_ORG, PARTNER_SCOPES, type TestGateway } from "./harness.js";

class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

// With kit's bound histograms (rpc.*.duration, http.server.request.duration), as startTelemetry's readers have them.
const reader = new TestReader({ metricProducers: [histogramProducer] });
let gw: TestGateway;
let key: string;

beforeAll(async () => {
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  gw = await buildTestGateway();
  key = gw.identity.addToken({ orgId: PARTNER_ORG, scopes: PARTNER_SCOPES });
});
afterAll(async () => {
  await gw.app.close();
  metrics.disable();
});

async function collected() {
  const { resourceMetrics } = await reader.collect();
  return resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
}

describe("gateway metrics", () => {
  it("records http.server.request.duration per route template, method and status, never per raw path", async () => {
    expect((await get(gw.app, `${API}/organizations/${ORG}`, key)).statusCode).toBeGreaterThanOrEqual(200);
    await get(gw.app, `${API}/no-such-route`, key);
    const duration = (await collected()).find((m) => m.descriptor.name === "http.server.request.duration");
    const series = duration?.dataPoints.map((p) => p.attributes) ?? [];
    expect(series).toContainEqual(
      expect.objectContaining({ "http.request.method": "GET", "http.route": `${API}/organizations/:orgId` }),
    );
    expect(series).toContainEqual(
      expect.objectContaining({ "http.route": "unmatched", "http.response.status_code": 404 }),
    );
    expect(series.some((a) => String(a["http.route"]).includes(ORG))).toBe(false);
    // Buckets in seconds, with the API latency SLO's threshold (0.5 s) among them.
    const point = duration?.dataPoints[0]?.value as { buckets: { boundaries: number[] } } | undefined;
    expect(point?.buckets.boundaries).toContain(0.5);
    expect(point?.buckets.boundaries.at(-1)).toBe(10);
  });

  it("counts rate-limit rejections by tier and bucket", async () => {
    const write = () =>
      gw.app.inject({
        method: "PATCH",
        url: `${API}/deals/${seededId("deal_", "gw-test", "metrics")}`,
        headers: { "x-platform-api-key": key, "idempotency-key": "k-1" },
        payload: { name: "Renamed" },
      });
    for (let i = 0; i < 20; i++) expect((await write()).statusCode).not.toBe(429);
    expect((await write()).statusCode).toBe(429);
    const rejections = (await collected()).find((m) => m.descriptor.name === "gateway.rate_limit.rejections");
    expect(rejections?.dataPoints).toEqual([
      expect.objectContaining({ value: 1, attributes: { tier: "write", bucket: "minute", delegated: false } }),
    ]);
  });
});
