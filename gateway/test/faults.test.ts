import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import type { ConnectRouter } from "@connectrpc/connect";
import { DealService } from "@platform/contracts/revenue";
import { WebhookSubscriptionService } from "@platform/contracts/webhooks";
import { ALL_SCOPES } from "@platform/kit/scopes";
import { capturingLogger } from "@platform/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API, buildTestGateway, errorType, ORG, type TestGateway } from "./harness.js";

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** Sends `data` as it is on a fresh connection and reads the answer until the server closes it. */
function raw(port: number, data: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(data));
    const chunks: Buffer[] = [];
    socket.on("data", (d) => chunks.push(d));
    // The server may close while the rest of an oversized request is still being written.
    socket.on("error", () => {});
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const split = text.indexOf("\r\n\r\n");
      if (split < 0) return reject(new Error(`no HTTP response: ${JSON.stringify(text)}`));
      const [statusLine, ...headerLines] = text.slice(0, split).split("\r\n");
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(":");
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine?.split(" ")[1]), headers, body: JSON.parse(text.slice(split + 4)) });
    });
  });
}

const lines: Record<string, unknown>[] = [];
let gw: TestGateway;
let port = 0;
let key = "";

// Stand-ins for services that misbehave: one that never answers, one whose database is gone.
const hangingWebhooks = (router: ConnectRouter) =>
  router.service(WebhookSubscriptionService, { listWebhookSubscriptions: () => new Promise(() => {}) });
const revenueWithoutDatabase = (router: ConnectRouter) =>
  router.service(DealService, {
    listDeals: async () => {
      throw Object.assign(new Error("Connection terminated unexpectedly"), {});
    },
    getDeal: async () => {
      throw Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" });
    },
  });

beforeAll(async () => {
  gw = await buildTestGateway({
    logger: capturingLogger("gateway-faults", "info", lines),
    config: { UPSTREAM_READ_TIMEOUT_MS: 300 },
    services: { webhooks: hangingWebhooks, revenue: revenueWithoutDatabase },
  });
  key = gw.identity.addToken({ orgId: ORG, scopes: [...ALL_SCOPES].filter((s) => s !== "partner:act-as-child") });
  await gw.app.listen({ port: 0, host: "127.0.0.1" });
  port = (gw.app.server.address() as AddressInfo).port;
});

afterAll(async () => {
  await gw.app.close();
});

function completionOf(requestId: string): Record<string, unknown>[] {
  return lines.filter((l) => l.requestId === requestId && l.msg === "request completed");
}

const ME = `${API}/organizations/me`;

describe("requests the HTTP parser refuses", () => {
  const cases: [string, string, string, number][] = [
    [
      "headers over 16 KiB",
      `GET ${ME} HTTP/1.1\r\nHost: a\r\nX-Request-Id: big-headers-1\r\nX-Big: ${"y".repeat(20_000)}\r\n\r\n`,
      "request-header-fields-too-large",
      431,
    ],
    ["a URL over the limit", `GET ${ME}?q=${"x".repeat(20_000)} HTTP/1.1\r\nHost: a\r\n\r\n`, "uri-too-long", 414],
    ["a garbage request line", "this is not http\r\n\r\n", "invalid-request", 400],
    ["an unknown method", `BREW ${ME} HTTP/1.1\r\nHost: a\r\nX-Request-Id: brew-1\r\n\r\n`, "invalid-request", 400],
    ["a bad header character", `GET ${ME} HTTP/1.1\r\nHost: a\r\nBad\u0001Name: x\r\n\r\n`, "invalid-request", 400],
    [
      "Content-Length with Transfer-Encoding",
      `POST ${API}/deals HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      "invalid-request",
      400,
    ],
    [
      "a bad chunk",
      `POST ${API}/deals HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
      "invalid-request",
      400,
    ],
  ];

  it.each(cases)("%s: problem+json with X-Request-Id and one completion log line", async (_, request, name, status) => {
    const res = await raw(port, request);
    expect(res.status).toBe(status);
    expect(res.headers["content-type"]).toBe("application/problem+json");
    expect(res.body).toMatchObject({ type: errorType(name as never), status });
    const requestId = res.headers["x-request-id"] ?? "";
    expect(requestId).toMatch(/\S/);
    expect(res.body.requestId).toBe(requestId);
    expect(completionOf(requestId)).toEqual([expect.objectContaining({ res: { statusCode: status } })]);
  });

  it("keeps the caller's X-Request-Id when the parser got that far", async () => {
    const res = await raw(port, cases[0]![1]);
    expect(res.headers["x-request-id"]).toBe("big-headers-1");
  });

  it("logs a request refused while decoding its URL as completed, once", async () => {
    const res = await fetch(`http://127.0.0.1:${port}${API}/deals/%E0%A4%A`, {
      headers: { "x-request-id": "bad-url-1" },
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(res.headers.get("x-request-id")).toBe("bad-url-1");
    await res.arrayBuffer();
    await new Promise((r) => setTimeout(r, 50));
    expect(completionOf("bad-url-1")).toEqual([expect.objectContaining({ res: { statusCode: 400 } })]);
  });
});

describe("a failing or hung service", () => {
  const call = (url: string) =>
    fetch(`http://127.0.0.1:${port}${API}${url}`, { headers: { "x-platform-api-key": key } });

  it("answers 504 upstream-timeout within the route's deadline; other routes are unaffected", async () => {
    const started = Date.now();
    const [hung, other] = await Promise.all([call("/webhook-subscriptions"), call("/organizations/me")]);
    expect(hung.status).toBe(504);
    expect(hung.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(((await hung.json()) as { type: string }).type).toBe(errorType("upstream-timeout"));
    // The read deadline is 300 ms here; generous bound for a loaded machine, far below a hang.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(other.status).toBe(200);
  });

  it("answers a lost database connection with a retryable 503 and Retry-After", async () => {
    for (const url of ["/deals", `/deals/deal_${"a".repeat(24)}`]) {
      const res = await call(url);
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("1");
      const body = (await res.json()) as { type: string; detail: string };
      expect(body.type).toBe(errorType("service-unavailable"));
      expect(body.detail).not.toMatch(/terminat|administrator/);
    }
  });
});
