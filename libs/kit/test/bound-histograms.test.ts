import { metrics } from "@opentelemetry/api";
import { PrometheusSerializer } from "@opentelemetry/exporter-prometheus";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { boundHistogram, DEFAULT_BOUNDARIES, histogramProducer } from "../src/bound-histograms.js";

class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const reader = new TestReader({ metricProducers: [histogramProducer] });

beforeAll(() => metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] })));
afterAll(() => metrics.disable());

/** The Prometheus text of one metric, its name replaced by NAME. */
async function exposition(name: string): Promise<string> {
  const { resourceMetrics } = await reader.collect();
  const text = new PrometheusSerializer().serialize(resourceMetrics);
  const prefix = name.replaceAll(".", "_");
  return text
    .split("\n")
    .filter((line) => line.includes(prefix))
    .map((line) => line.replaceAll(prefix, "NAME"))
    .sort()
    .join("\n");
}

describe("bound histograms", () => {
  it("expose exactly what the SDK's explicit-bucket histogram exposes for the same records", async () => {
    const boundaries = [0.005, 0.01, 0.5, 1];
    const sdk = metrics.getMeter("test-scope").createHistogram("sdk.duration", {
      description: "d",
      unit: "s",
      advice: { explicitBucketBoundaries: boundaries },
    });
    const bound = boundHistogram("test-scope", "bound.duration", { description: "d", unit: "s", boundaries });
    expect(bound).toBeDefined();
    const records: [number, Record<string, string | number>][] = [
      [0.001, { route: "/a", status: 200 }],
      [0.005, { route: "/a", status: 200 }], // on a boundary: its own bucket (le)
      [0.3, { status: 200, route: "/a" }], // the same label set in another key order
      [7, { route: "/a", status: 500 }], // above the last boundary
      [-1, { route: "/a", status: 200 }], // negative: dropped
      [Number.NaN, { route: "/b", status: 200 }], // NaN: dropped
    ];
    for (const [value, attributes] of records) {
      sdk.record(value, attributes);
      bound?.seriesOf(attributes).record(value);
    }
    const expected = await exposition("sdk.duration");
    expect(expected).toContain('NAME_bucket{route="/a",status="200",otel_scope_name="test-scope",le="0.005"} 2');
    expect(await exposition("bound.duration")).toBe(expected);
  });

  it("give the same series for the same scope, name and label set; none without a meter provider", () => {
    const a = boundHistogram("test-scope", "same", { description: "", unit: "ms", boundaries: DEFAULT_BOUNDARIES });
    const b = boundHistogram("test-scope", "same", { description: "", unit: "ms", boundaries: DEFAULT_BOUNDARIES });
    expect(a).toBe(b);
    expect(a?.seriesOf({ x: "1", y: 2 })).toBe(b?.seriesOf({ y: 2, x: "1" }));
    metrics.disable();
    try {
      expect(boundHistogram("test-scope", "other", { description: "", unit: "ms", boundaries: [] })).toBeUndefined();
    } finally {
      metrics.setGlobalMeterProvider(new MeterProvider({ readers: [] }));
    }
  });
});
