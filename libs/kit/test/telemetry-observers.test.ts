import { createServer } from "node:net";
import { metrics } from "@opentelemetry/api";
import { afterAll, describe, expect, it } from "vitest";
import { observeEventLoopDelay } from "../src/event-loop.js";
import { observeGc } from "../src/gc.js";
import { startTelemetry, stopTelemetry } from "../src/telemetry.js";
import { globalTestReader, makeGarbage } from "./metric-reader.js";

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

afterAll(() => metrics.disable());

describe("the runtime observers startTelemetry starts", () => {
  it("end with stopTelemetry, so a meter provider registered later gets observers of its own", async () => {
    process.env.METRICS_PORT = String(await freePort());
    process.env.METRICS_HOST = "127.0.0.1";
    try {
      await startTelemetry("telemetry-observers-test");
    } finally {
      await stopTelemetry();
      delete process.env.METRICS_PORT;
      delete process.env.METRICS_HOST;
    }
    const reader = globalTestReader();
    // Left running, startTelemetry's observers would be returned here, bound to its shut-down provider.
    const stops = [observeEventLoopDelay(), observeGc()];
    try {
      expect(await makeGarbage(20)).toBeGreaterThan(0);
      const { resourceMetrics } = await reader.collect();
      const names = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).map((m) => m.descriptor.name);
      expect(names).toContain("v8js.gc.duration");
      expect(names).toContain("nodejs.eventloop.delay.max");
    } finally {
      for (const stop of stops) stop();
    }
  });
});
