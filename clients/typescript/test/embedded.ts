import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { gatewayConfigSpec } from "@platform/gateway/config";
import { ManualClock } from "@platform/kit/clock";
import { loadConfig } from "@platform/kit/config";
import { createLogger } from "@platform/kit/logger";
import { createEmbeddedPlatform, type EmbeddedPlatform } from "@platform/runtime/platform";

// The embedded platform listening on a real port (this package's tests use 31000–31999), with a
// manual clock: rate-limit windows and webhook timestamps move only when a test moves them.

export interface RunningPlatform {
  platform: EmbeddedPlatform;
  clock: ManualClock;
  baseUrl: string;
  /** Sandbox keys by name (acme-full, acme-readonly, northwind-partner, …). */
  keys: Record<string, string>;
  close(): Promise<void>;
}

export const DOCS_URL = "https://docs.client-test.example";

export async function startPlatform(opts: { port: number; seed: string }): Promise<RunningPlatform> {
  const clock = new ManualClock(new Date("2026-03-02T10:00:00Z"));
  const platform = await createEmbeddedPlatform({
    clock,
    logger: createLogger("client-test", "silent"),
    gateway: loadConfig(gatewayConfigSpec, { PLATFORM_DOCS_URL: DOCS_URL, LOG_LEVEL: "silent" }),
    sandboxSeed: opts.seed,
    seedSandbox: true,
    adminSecret: `${opts.seed}-admin`,
    // The test receiver is plain http on 127.0.0.1, which only this platform may target.
    env: { WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true", WEBHOOKS_POLL_MS: "20", WEBHOOKS_TIMEOUT_MS: "2000" },
  });
  await platform.app.listen({ port: opts.port, host: "127.0.0.1" });
  const keys = Object.fromEntries((await platform.sandboxKeys()).map((k) => [k.name, k.key]));
  return {
    platform,
    clock,
    baseUrl: `http://127.0.0.1:${opts.port}`,
    keys,
    close: () => platform.close(),
  };
}

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook endpoint on 127.0.0.1 that records each POST and answers 200. */
export async function startReceiver(port: number) {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (d: Buffer) => chunks.push(d));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}/hooks`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Polls `check` until it returns a value (or throws after `timeoutMs`). */
export async function waitFor<T>(check: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}
