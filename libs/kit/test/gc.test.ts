import { metrics } from "@opentelemetry/api";
import type { HistogramMetricData } from "@opentelemetry/sdk-metrics";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { observeGc } from "../src/gc.js";
import { globalTestReader, makeGarbage, type TestReader } from "./metric-reader.js";

let reader: TestReader;
let stop: () => void;

beforeAll(() => {
  reader = globalTestReader();
  stop = observeGc();
});
afterAll(() => {
  stop();
  metrics.disable();
});

/** The histogram's points by `v8js.gc.type`, or nothing while no collection was seen. */
async function pauses(): Promise<Map<string, { count: number; sum: number }>> {
  const { resourceMetrics } = await reader.collect();
  const metric = resourceMetrics.scopeMetrics
    .flatMap((s) => s.metrics)
    .find((m) => m.descriptor.name === "v8js.gc.duration") as HistogramMetricData | undefined;
  return new Map(
    (metric?.dataPoints ?? []).map((p) => [
      String(p.attributes["v8js.gc.type"]),
      { count: p.value.count, sum: p.value.sum ?? 0 },
    ]),
  );
}

describe("GC pauses (v8js.gc.duration)", () => {
  it("records each collection's pause in seconds under its kind, with the convention's buckets", async () => {
    let kept = 0;
    for (let round = 0; round < 50 && !(await pauses()).has("minor"); round++) kept += await makeGarbage(1);
    expect(kept).toBeGreaterThan(0);
    const minor = (await pauses()).get("minor");
    expect(minor?.count).toBeGreaterThan(0);
    // Seconds, not milliseconds: a scavenge of a small young generation takes well under one.
    expect(minor?.sum).toBeGreaterThan(0);
    expect((minor?.sum ?? 0) / (minor?.count ?? 1)).toBeLessThan(0.5);
    const { resourceMetrics } = await reader.collect();
    const metric = resourceMetrics.scopeMetrics
      .flatMap((s) => s.metrics)
      .find((m) => m.descriptor.name === "v8js.gc.duration");
    expect(metric?.descriptor.unit).toBe("s");
    expect((metric as HistogramMetricData).dataPoints[0]?.value.buckets.boundaries.slice(0, 3)).toEqual([
      0.005, 0.01, 0.025,
    ]);
  });

  it("shares one observer between calls and records nothing once stopped", async () => {
    expect(observeGc()).toBe(stop);
    stop();
    // Entries the observer had queued before it stopped are delivered on a later turn: let them land.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const before = (await pauses()).get("minor")?.count ?? 0;
    expect(await makeGarbage(10)).toBeGreaterThan(0);
    expect((await pauses()).get("minor")?.count ?? 0).toBe(before);
  });
});
