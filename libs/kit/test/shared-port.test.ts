import http from "node:http";
import net from "node:net";
import { metrics } from "@opentelemetry/api";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { afterAll, describe, expect, it } from "vitest";
import { listenShared } from "../src/shared-port.js";
import { startTelemetry, stopTelemetry } from "../src/telemetry.js";

// Under `npm run stack` (LISTEN_REUSE_PORT=1) every listener binds with SO_REUSEPORT (Node ≥ 22.12),
// so that a replacement instance can listen on a port before the old one stops (`npm run stack --
// roll`); the metrics endpoint is one of them, served by kit rather than by the Prometheus
// exporter's own server. Without the setting, a taken port stays an error.
const reusePort = (() => {
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  return major > 22 || (major === 22 && minor >= 12);
})();

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", () => r()));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((r) => probe.close(r));
  return port;
}

afterAll(async () => {
  await stopTelemetry();
});

describe("listeners on a shared port", () => {
  it.runIf(reusePort)("lets a second server listen on a port the first still serves, and both answer", async () => {
    const port = await freePort();
    const first = http.createServer((_req, res) => res.end("first"));
    const second = http.createServer((_req, res) => res.end("second"));
    process.env.LISTEN_REUSE_PORT = "1";
    await listenShared(first, port, "127.0.0.1");
    try {
      await listenShared(second, port, "127.0.0.1");
      // Connections go to either until the first closes; then all reach the second.
      await new Promise((r) => first.close(r));
      expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe("second");
    } finally {
      first.closeAllConnections();
      second.closeAllConnections();
      await new Promise((r) => second.close(r));
      delete process.env.LISTEN_REUSE_PORT;
    }
  });

  it("without LISTEN_REUSE_PORT=1, a second instance on a port gets EADDRINUSE instead of sharing it", async () => {
    const port = await freePort();
    const first = http.createServer();
    await listenShared(first, port, "127.0.0.1");
    try {
      await expect(listenShared(http.createServer(), port, "127.0.0.1")).rejects.toMatchObject({ code: "EADDRINUSE" });
    } finally {
      await new Promise((r) => first.close(r));
    }
  });

  it("rejects when the port is held by a listener without SO_REUSEPORT", async () => {
    const holder = net.createServer();
    await new Promise<void>((r) => holder.listen(0, "127.0.0.1", () => r()));
    const { port } = holder.address() as net.AddressInfo;
    try {
      await expect(listenShared(http.createServer(), port, "127.0.0.1")).rejects.toMatchObject({ code: "EADDRINUSE" });
    } finally {
      await new Promise((r) => holder.close(r));
    }
  });

  it("serves /metrics on METRICS_PORT, and nothing else there", async () => {
    const port = await freePort();
    process.env.METRICS_PORT = String(port);
    process.env.METRICS_HOST = "127.0.0.1";
    await startTelemetry("shared-port-test");
    delete process.env.METRICS_PORT;
    delete process.env.METRICS_HOST;
    await expect
      .poll(async () => (await fetch(`http://127.0.0.1:${port}/metrics`).catch(() => undefined))?.status)
      .toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
    await stopTelemetry();
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
    // What start registered as the API's globals is gone: another meter provider can register
    // (the files after this one in a worker set their own).
    const provider = new MeterProvider();
    expect(metrics.setGlobalMeterProvider(provider)).toBe(true);
    metrics.disable();
  });
});
