import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { vi } from "vitest";

// A local webhook endpoint for the end-to-end tests: it records every POST and answers 200.
// (The webhooks service's own tests have a richer one; a test here may not import them.)

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  path: string;
}

export async function startReceiver(): Promise<{ url: string; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => {
      received.push({ headers: req.headers, body, path: req.url ?? "" });
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Verifies a received webhook with the standardwebhooks package (a third-party verifier). Its
 * timestamp tolerance reads the system time, which is pinned to the test clock meanwhile.
 */
export function verifyWebhook(secret: string, r: Received, at: Date): unknown {
  const spy = vi.spyOn(Date, "now").mockReturnValue(at.getTime());
  try {
    return new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
  } finally {
    spy.mockRestore();
  }
}
