import http from "node:http";
import http2 from "node:http2";
import { create, toBinary } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  createClient,
  createContextKey,
  type Interceptor,
} from "@connectrpc/connect";
import { connectNodeAdapter, createConnectTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckRequestSchema, HealthCheckResponse_ServingStatus } from "@platform/contracts/health";
import { GatewayAuthService, OrganizationService } from "@platform/contracts/identity";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../src/clock.js";
import { errorInterceptor, httpTransport, problemFromError, type RunningServer, serveConnect } from "../src/connect.js";
import { CONTEXT_HEADER, type RequestContext, signContext } from "../src/context.js";
import { createLogger } from "../src/logger.js";
import { problem } from "../src/problems.js";

// The lean unary path (unary-transport.ts, unary-handler.ts) against Connect-ES's own client
// and server, over real HTTP/1.1 and HTTP/2 on loopback: the same wire, the same errors, the
// same contracts.
const SERVING = { status: HealthCheckResponse_ServingStatus.SERVING };
const codeOf = (err: unknown) => (err instanceof ConnectError ? Code[err.code] : String(err));

const order: string[] = [];
let signalReason: unknown;
const tag =
  (name: string): Interceptor =>
  (next) =>
  async (req) => {
    order.push(`${name}>`);
    const res = await next(req);
    order.push(`<${name}`);
    return res;
  };

const routes = (router: ConnectRouter) =>
  router.service(Health, {
    async check(req, ctx) {
      switch (req.service) {
        case "headers":
          ctx.responseHeader.set("x-echo", ctx.requestHeader.get("x-ask") ?? "none");
          ctx.responseTrailer.set("x-trailer", "t");
          return SERVING;
        case "problem":
          throw problem("not-found", "No such thing.");
        case "crash":
          throw new Error("secret detail");
        case "wait":
          await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
          signalReason = ctx.signal.reason;
          return SERVING;
        case "deadline":
          return { status: ctx.timeoutMs() === undefined ? 0 : HealthCheckResponse_ServingStatus.SERVING };
        case "value":
          return { status: ctx.values.get(valueKey) as HealthCheckResponse_ServingStatus };
        default:
          return SERVING;
      }
    },
    async *watch(_req) {
      yield SERVING;
      yield { status: HealthCheckResponse_ServingStatus.NOT_SERVING };
    },
  });

const valueKey = createContextKey<number>(0);
const setValue: Interceptor = (next) => (req) => {
  req.contextValues.set(valueKey, HealthCheckResponse_ServingStatus.NOT_SERVING);
  return next(req);
};

let lean: RunningServer;
let standard: http2.Http2Server;
let standardPort = 0;
let standardH1: http.Server;
let standardH1Port = 0;
const sessions = new Set<http2.ServerHttp2Session>();
const logger = createLogger("test", "silent");

beforeAll(async () => {
  lean = await serveConnect({
    routes,
    interceptors: [errorInterceptor(logger), tag("a"), tag("b"), setValue],
    port: 0,
    host: "127.0.0.1",
  });
  standard = http2.createServer(connectNodeAdapter({ routes, interceptors: [errorInterceptor(logger)] }));
  standard.on("session", (s) => sessions.add(s));
  await new Promise<void>((resolve) => standard.listen(0, "127.0.0.1", resolve));
  standardPort = (standard.address() as { port: number }).port;
  standardH1 = http.createServer(connectNodeAdapter({ routes, interceptors: [errorInterceptor(logger)] }));
  await new Promise<void>((resolve) => standardH1.listen(0, "127.0.0.1", resolve));
  standardH1Port = (standardH1.address() as { port: number }).port;
});
afterAll(async () => {
  await lean.close();
  for (const s of sessions) s.destroy();
  await new Promise((resolve) => standard.close(resolve));
  standardH1.closeAllConnections();
  await new Promise((resolve) => standardH1.close(resolve));
});

type Version = "1.1" | "2";
const leanClient = (version: Version = "1.1") =>
  createClient(Health, httpTransport(`http://127.0.0.1:${lean.port}`, [], { unaryHttpVersion: version }));

/** A "wait" call with a 100 ms deadline, sent on a bare session that never resets it: its status. */
function waitPastDeadline(session: http2.ClientHttp2Session): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const s = session.request({
      ":method": "POST",
      ":path": "/grpc.health.v1.Health/Check",
      "content-type": "application/proto",
      "connect-timeout-ms": "100",
    });
    s.on("response", (h) => resolve(Number(h[":status"])));
    s.on("error", reject);
    s.resume();
    s.end(Buffer.from(toBinary(HealthCheckRequestSchema, create(HealthCheckRequestSchema, { service: "wait" }))));
  });
}

/** A binary Check posted over HTTP/1.1 on a connection of its own: its status once answered. */
function postH1(port: number, body: { service: string }, headers: Record<string, string>) {
  return new Promise<{ status: number }>((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path: "/grpc.health.v1.Health/Check",
        headers: { "content-type": "application/proto", ...headers },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0 }));
      },
    );
    req.on("error", reject);
    req.end(Buffer.from(toBinary(HealthCheckRequestSchema, create(HealthCheckRequestSchema, body))));
  });
}

describe.each(["1.1", "2"] as const)("lean unary client (unary calls over HTTP/%s) and server", (version) => {
  it("carries request headers, response headers and trailers both ways", async () => {
    let header: Headers | undefined;
    let trailer: Headers | undefined;
    const res = await leanClient(version).check(
      { service: "headers" },
      {
        headers: { "x-ask": "hello" },
        onHeader: (h) => {
          header = h;
        },
        onTrailer: (t) => {
          trailer = t;
        },
      },
    );
    expect(res.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    expect(header?.get("x-echo")).toBe("hello");
    expect(trailer?.get("x-trailer")).toBe("t");
  });

  it("runs the server's interceptors in order, with values they set reaching the handler", async () => {
    order.length = 0;
    const res = await leanClient(version).check({ service: "value" });
    expect(order).toEqual(["a>", "b>", "<b", "<a"]);
    expect(res.status).toBe(HealthCheckResponse_ServingStatus.NOT_SERVING);
  });

  it("passes a problem through as Connect-ES does: code and the typed detail", async () => {
    const err = await leanClient(version)
      .check({ service: "problem" })
      .catch((e: unknown) => e);
    expect(codeOf(err)).toBe("NotFound");
    expect(problemFromError(err).problemName).toBe("not-found");
    expect(problemFromError(err).detail).toBe("No such thing.");
  });

  it("hides an unexpected error as internal, without its message", async () => {
    const err = await leanClient(version)
      .check({ service: "crash" })
      .catch((e: unknown) => e);
    expect(codeOf(err)).toBe("Internal");
    expect((err as ConnectError).rawMessage).not.toContain("secret");
  });

  it("sends the deadline, and ends a call that outlives it with DeadlineExceeded on both sides", async () => {
    const withDeadline = await leanClient(version).check({ service: "deadline" }, { timeoutMs: 5000 });
    expect(withDeadline.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    signalReason = undefined;
    const err = await leanClient(version)
      .check({ service: "wait" }, { timeoutMs: 150 })
      .catch((e: unknown) => e);
    expect(codeOf(err)).toBe("DeadlineExceeded");
    await new Promise((resolve) => setTimeout(resolve, 100));
    // The server's own timer and the client's reset race at the same instant: either ends it.
    expect(["DeadlineExceeded", "Canceled"]).toContain(codeOf(signalReason));
  });

  it("cancels a call its caller aborts", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const err = await leanClient(version)
      .check({ service: "wait" }, { signal: controller.signal, timeoutMs: 5000 })
      .catch((e: unknown) => e);
    expect(codeOf(err)).toBe("Canceled");
  });

  it("calls a service again after it restarted on the same port, on a new connection", async () => {
    // A call free of side effects: over HTTP/1.1 the first call after the restart may pick the
    // pooled connection the old server closed, and is then sent once more.
    const orgRoutes = (router: ConnectRouter) =>
      router.service(OrganizationService, { getOrganization: async () => ({}) });
    const first = await serveConnect({ routes: orgRoutes, interceptors: [], port: 0, host: "127.0.0.1" });
    const client = createClient(
      OrganizationService,
      httpTransport(`http://127.0.0.1:${first.port}`, [], { unaryHttpVersion: version }),
    );
    await client.getOrganization({});
    await first.close();
    const second = await serveConnect({ routes: orgRoutes, interceptors: [], port: first.port, host: "127.0.0.1" });
    try {
      expect((await client.getOrganization({})).organization).toBeUndefined();
    } finally {
      await second.close();
    }
  });

  it("reports a server it cannot reach as Unavailable (the gateway's 503)", async () => {
    const closed = http2.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    const err = await createClient(Health, httpTransport(`http://127.0.0.1:${port}`, [], { unaryHttpVersion: version }))
      .check({})
      .catch((e: unknown) => e);
    expect(codeOf(err)).toBe("Unavailable");
    expect(problemFromError(err).problemName).toBe("service-unavailable");
  });

  it("reports an RPC the server does not serve as Unimplemented (a service deployed before the RPC)", async () => {
    // The gateway's key look-ups rely on it: from such an identity they fall back to one call a key.
    const err = await createClient(
      GatewayAuthService,
      httpTransport(`http://127.0.0.1:${lean.port}`, [], { unaryHttpVersion: version }),
    )
      .resolveApiKeys({ keyHashes: [] })
      .catch((e: unknown) => e);
    expect(codeOf(err)).toBe("Unimplemented");
  });

  it("streams through Connect-ES on both sides", async () => {
    const seen: number[] = [];
    for await (const res of leanClient(version).watch({})) seen.push(res.status);
    expect(seen).toEqual([HealthCheckResponse_ServingStatus.SERVING, HealthCheckResponse_ServingStatus.NOT_SERVING]);
  });
});

describe("lean server, callers that give up or misbehave", () => {
  it("aborts the handler's signal at the deadline the caller sent, with no reset from the caller", async () => {
    signalReason = undefined;
    const session = http2.connect(`http://127.0.0.1:${lean.port}`);
    try {
      const status = await waitPastDeadline(session);
      expect(status).toBe(200);
      expect(codeOf(signalReason)).toBe("DeadlineExceeded");
    } finally {
      session.close();
    }
  });

  it("gives interceptors the call's signal as an own property, which a request they spread keeps", async () => {
    const seen: unknown[] = [];
    // A new header makes the server rebuild the handler's context from the request.
    const spread: Interceptor = (next) => (req) => {
      seen.push(req.signal instanceof AbortSignal, Object.keys(req).includes("signal"));
      return next({ ...req, header: new Headers(req.header) });
    };
    const server = await serveConnect({ routes, interceptors: [spread], port: 0, host: "127.0.0.1" });
    const session = http2.connect(`http://127.0.0.1:${server.port}`);
    try {
      signalReason = undefined;
      const status = await waitPastDeadline(session);
      expect(status).toBe(200);
      expect(codeOf(signalReason)).toBe("DeadlineExceeded");
      expect(seen).toEqual([true, true]);
    } finally {
      session.close();
      await server.close();
    }
  });

  it("survives a caller that resets its stream with an error code, and stops that call's handler", async () => {
    signalReason = undefined;
    const session = http2.connect(`http://127.0.0.1:${lean.port}`);
    try {
      const s = session.request({
        ":method": "POST",
        ":path": "/grpc.health.v1.Health/Check",
        "content-type": "application/proto",
      });
      s.on("error", () => {});
      s.end(Buffer.from(toBinary(HealthCheckRequestSchema, create(HealthCheckRequestSchema, { service: "wait" }))));
      await new Promise((resolve) => setTimeout(resolve, 50));
      // Not CANCEL: a reset with an error code is an 'error' on the server's stream.
      s.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(codeOf(signalReason)).toBe("Canceled");
      expect((await leanClient().check({})).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    } finally {
      session.close();
    }
  });

  it("aborts the handler's signal at the deadline an HTTP/1.1 caller sent", async () => {
    signalReason = undefined;
    const res = await postH1(lean.port, { service: "wait" }, { "connect-timeout-ms": "100" });
    expect(res.status).toBe(200);
    expect(codeOf(signalReason)).toBe("DeadlineExceeded");
  });

  it("stops the handler of a call whose HTTP/1.1 caller closes its connection", async () => {
    signalReason = undefined;
    const req = http.request({
      host: "127.0.0.1",
      port: lean.port,
      method: "POST",
      path: "/grpc.health.v1.Health/Check",
      headers: { "content-type": "application/proto" },
    });
    req.on("error", () => {});
    req.end(Buffer.from(toBinary(HealthCheckRequestSchema, create(HealthCheckRequestSchema, { service: "wait" }))));
    await new Promise((resolve) => setTimeout(resolve, 50));
    req.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(codeOf(signalReason)).toBe("Canceled");
    expect((await leanClient().check({})).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
  });
});

const apiContext = (idempotencyKey: string | undefined): RequestContext => ({
  principal: "api",
  requestId: "req_1",
  ...(idempotencyKey ? { idempotencyKey } : {}),
});

describe("a connection lost before the answer, over HTTP/1.1", () => {
  it("sends a call free of side effects or with an idempotency key once more, on another connection, and any other call never", async () => {
    let received = 0;
    let crash = false;
    // Answers an empty message (zero bytes, valid for any response) until told to drop the
    // connection instead, as a service that dies while it runs a call.
    const server = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        received++;
        if (crash) return void req.socket.destroy();
        res.writeHead(200, { "content-type": "application/proto" });
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const client = createClient(
      OrganizationService,
      httpTransport(`http://127.0.0.1:${(server.address() as { port: number }).port}`),
    );
    try {
      // Declared NO_SIDE_EFFECTS: sent again, and Unavailable when that fails too.
      await client.getOrganization({});
      crash = true;
      received = 0;
      expect(codeOf(await client.getOrganization({}).catch((e: unknown) => e))).toBe("Unavailable");
      expect(received).toBe(2);
      // No idempotency declared: the service may have run it, so it is never sent again.
      crash = false;
      await client.updateOrganization({});
      crash = true;
      received = 0;
      expect(codeOf(await client.updateOrganization({}).catch((e: unknown) => e))).toBe("Unavailable");
      expect(received).toBe(1);
      // The same write with the request's Idempotency-Key in its signed context: the service
      // runs it once however often it arrives, so it is sent again.
      const keyed = { headers: { [CONTEXT_HEADER]: signContext(apiContext("key-1"), "s", systemClock) } };
      received = 0;
      expect(codeOf(await client.updateOrganization({}, keyed).catch((e: unknown) => e))).toBe("Unavailable");
      expect(received).toBe(2);
      const unkeyed = { headers: { [CONTEXT_HEADER]: signContext(apiContext(undefined), "s", systemClock) } };
      received = 0;
      expect(codeOf(await client.updateOrganization({}, unkeyed).catch((e: unknown) => e))).toBe("Unavailable");
      expect(received).toBe(1);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("interoperates with Connect-ES", () => {
  it.each([
    ["2", () => standardPort],
    ["1.1", () => standardH1Port],
  ] as const)("the lean client calls Connect-ES's server over HTTP/%s, errors included", async (version, port) => {
    const client = createClient(Health, httpTransport(`http://127.0.0.1:${port()}`, [], { unaryHttpVersion: version }));
    let header: Headers | undefined;
    await client.check(
      { service: "headers" },
      {
        headers: { "x-ask": "x" },
        onHeader: (h) => {
          header = h;
        },
      },
    );
    expect(header?.get("x-echo")).toBe("x");
    const err = await client.check({ service: "problem" }).catch((e: unknown) => e);
    expect(problemFromError(err).problemName).toBe("not-found");
  });

  it.each([
    [true, "2"],
    [false, "2"],
    [true, "1.1"],
    [false, "1.1"],
  ] as const)(
    "Connect-ES's client (binary %s, HTTP/%s) calls the lean server",
    async (useBinaryFormat, httpVersion) => {
      const client = createClient(
        Health,
        createConnectTransport({ baseUrl: `http://127.0.0.1:${lean.port}`, httpVersion, useBinaryFormat }),
      );
      let trailer: Headers | undefined;
      const res = await client.check(
        { service: "headers" },
        {
          onTrailer: (t) => {
            trailer = t;
          },
        },
      );
      expect(res.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      expect(trailer?.get("x-trailer")).toBe("t");
      const err = await client.check({ service: "problem" }).catch((e: unknown) => e);
      expect(problemFromError(err).problemName).toBe("not-found");
    },
  );

  it("answers a malformed body with InvalidArgument and an unknown method with Unimplemented", async () => {
    const session = http2.connect(`http://127.0.0.1:${lean.port}`);
    const post = (path: string, body: Buffer) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const s = session.request({ ":method": "POST", ":path": path, "content-type": "application/proto" });
        let status = 0;
        let text = "";
        s.on("response", (h) => {
          status = Number(h[":status"]);
        });
        s.setEncoding("utf8");
        s.on("data", (c: string) => {
          text += c;
        });
        s.on("end", () => resolve({ status, text }));
        s.on("error", reject);
        s.end(body);
      });
    try {
      const bad = await post("/grpc.health.v1.Health/Check", Buffer.from([0x0a, 0xff]));
      expect(bad.status).toBe(400);
      expect(JSON.parse(bad.text).code).toBe("invalid_argument");
      const unknown = await post("/grpc.health.v1.Health/Nope", Buffer.alloc(0));
      expect(unknown.status).toBe(404);
    } finally {
      session.close();
    }
  });
});
