import type { AddressInfo } from "node:net";
import net from "node:net";
import type { ConnectRouter } from "@connectrpc/connect";
import { WebhookSubscriptionService } from "@platform/contracts/webhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API, buildTestGateway, ORG, type TestGateway } from "./harness.js";

// The gateway draining (app.close(), as on SIGTERM) with a call in flight on a keep-alive
// connection: a request pipelined behind it, so arriving while the gateway closes, is served
// with `Connection: close` (not fastify's bare 503: a rolling restart owes it its answer), and
// /readyz says not ready from the first moment.
let gw: TestGateway;
let port = 0;
let key = "";
const held: (() => void)[] = [];
const slowWebhooks = (router: ConnectRouter) =>
  router.service(WebhookSubscriptionService, {
    listWebhookSubscriptions: () => new Promise((resolve) => held.push(() => resolve({}))),
  });

beforeAll(async () => {
  gw = await buildTestGateway({ services: { webhooks: slowWebhooks } });
  key = gw.identity.addToken({ orgId: ORG, scopes: ["webhooks:read", "organizations:read"] });
  await gw.app.listen({ port: 0, host: "127.0.0.1" });
  port = (gw.app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  for (const release of held) release();
  await gw.app.close();
});

/** A raw HTTP/1.1 connection: `send` writes a request; `answers` resolves once the server closes it. */
function connection() {
  const socket = net.connect(port, "127.0.0.1");
  const chunks: Buffer[] = [];
  socket.on("data", (c: Buffer) => chunks.push(c));
  const open = new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  const answers = new Promise<{ status: number; head: string; body: string }[]>((resolve) => {
    socket.once("close", () => {
      const out: { status: number; head: string; body: string }[] = [];
      let rest = Buffer.concat(chunks).toString("utf8");
      while (rest.startsWith("HTTP/1.1 ")) {
        const split = rest.indexOf("\r\n\r\n");
        const head = rest.slice(0, split);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        out.push({ status: Number(head.split(" ")[1]), head, body: rest.slice(split + 4, split + 4 + length) });
        rest = rest.slice(split + 4 + length);
      }
      resolve(out);
    });
  });
  return {
    send: async (request: string) => {
      await open;
      await new Promise<void>((resolve) => socket.write(request, () => resolve()));
    },
    answers,
    end: () => socket.destroy(),
  };
}

const get = (path: string, extra = "") =>
  `GET ${path} HTTP/1.1\r\nHost: gw\r\nX-Platform-Api-Key: ${key}\r\nConnection: keep-alive\r\n${extra}\r\n`;

describe("the gateway draining", () => {
  it("answers what arrives on an open connection with Connection: close, and is not ready", async () => {
    const api = connection();
    const probe = connection();
    await api.send(get(`${API}/webhook-subscriptions`));
    await probe.send(get(`${API}/webhook-subscriptions`));
    await expect.poll(() => held.length).toBe(2);
    const closed = gw.app.close();
    // Sent on the busy connections once the gateway is closing: each is read, and waits its turn.
    await api.send(get(`${API}/organizations/me`));
    await probe.send(get("/readyz"));
    await new Promise((r) => setTimeout(r, 100));
    for (const release of held.splice(0)) release();
    const timeout = setTimeout(() => {
      api.end();
      probe.end();
    }, 10_000);
    const [apiAnswers, probeAnswers] = await Promise.all([api.answers, probe.answers]);
    clearTimeout(timeout);
    await closed;
    expect(apiAnswers.map((a) => a.status)).toEqual([200, 200]);
    expect(JSON.parse(apiAnswers[1]?.body ?? "{}").id).toBe(ORG);
    expect(apiAnswers[1]?.head).toMatch(/\r\nconnection: close/i);
    expect(probeAnswers.map((a) => a.status)).toEqual([200, 503]);
    expect(JSON.parse(probeAnswers[1]?.body ?? "{}").type).toMatch(/\/service-unavailable$/);
  });
});
