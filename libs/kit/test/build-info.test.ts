import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { PrometheusSerializer } from "@opentelemetry/exporter-prometheus";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { describe, expect, it } from "vitest";
import { buildInfo, registerBuildInfoMetric } from "../src/build-info.js";

class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const ROOT = new URL("../../../", import.meta.url);
const rootVersion = (JSON.parse(readFileSync(new URL("package.json", ROOT), "utf8")) as { version?: string }).version;
const head = (() => {
  try {
    return execFileSync("git", ["rev-parse", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
})();

describe("buildInfo", () => {
  it("runs from source: the root package.json's version and the checkout's commit", () => {
    expect(buildInfo({})).toEqual({ version: rootVersion ?? "unknown", commit: head });
  });

  it("takes the commit from BUILD_COMMIT when nothing was compiled in", () => {
    expect(buildInfo({ BUILD_COMMIT: "0123abc" }).commit).toBe("0123abc");
    expect(buildInfo({ BUILD_COMMIT: " " }).commit).toBe(head);
  });
});

describe("build_info gauge", () => {
  it("is 1, labelled with version, commit and service, as Prometheus scrapes it", async () => {
    const reader = new TestReader();
    const provider = new MeterProvider({ readers: [reader] });
    registerBuildInfoMetric("identity", provider.getMeter("test"));
    const { resourceMetrics } = await reader.collect();
    const text = new PrometheusSerializer().serialize(resourceMetrics);
    const { version, commit } = buildInfo();
    const line = text.split("\n").find((l) => l.startsWith("build_info{"));
    expect(line).toBeDefined();
    expect(line).toContain(`version="${version}"`);
    expect(line).toContain(`commit="${commit}"`);
    expect(line).toContain('service="identity"');
    expect(line).toMatch(/\} 1$/);
    await provider.shutdown();
  });
});
