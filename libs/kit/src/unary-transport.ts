import http2 from "node:http2";
import { create, type DescMessage, fromBinary, isMessage, toBinary } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import {
  Code,
  ConnectError,
  type ContextValues,
  createContextValues,
  type Interceptor,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { errorFromJsonBytes, validateResponse } from "@connectrpc/connect/protocol-connect";
import { Http2SessionManager } from "@connectrpc/connect-node";
import { type Dispatcher, Pool } from "undici";
// Every node:http2 request binds an AsyncResource: without this, each one is promoted whole.
import "./async-resource-bind-fix.js";
import { CallHeaders, type HeadersInit } from "./call-headers.js";
import { CONTEXT_HEADER, contextHasIdempotencyKey } from "./context.js";

/**
 * Connect-RPC (the Connect protocol, binary) for unary calls, over HTTP/1.1 keep-alive (or
 * HTTP/2 when asked), without the general machinery of Connect-ES's Node transport.
 *
 * Why lean: measured on this project's 2-core VM, a unary call through `createConnectTransport`
 * costs the caller ~260–290 µs of CPU, against ~65–80 µs for the same request made directly on
 * a `node:http2` session (docs/benchmarks/gateway.md, "A lean unary RPC path"). The difference is
 * per-call plumbing a unary call does not need: an async-iterable pipeline for a one-message
 * body, an AbortController linked to a deadline signal, and a `DOMException` and a
 * `ConnectError` allocated on every successful call (connectrpc/connect-es#1580).
 *
 * Why HTTP/1.1: kit's server spent a third less CPU on a call over it than over HTTP/2 (31–33
 * against 50–51 µs), identity 20–30 % less per read proxied by the gateway, and the gateway's
 * tail at an even 1,000 req/s was shorter (docs/benchmarks/rpc.md, "Unary calls over HTTP/1.1").
 * Kit's server takes both on one port.
 *
 * What stays Connect-ES's: the request headers, response validation, trailer handling and the
 * error JSON (`@connectrpc/connect/protocol-connect`), `ConnectError`, the interceptor contract
 * and, over HTTP/2, the session manager (connecting, GOAWAY, keep-alive pings, idle close).
 * Streaming calls go to Connect-ES's own transport (HTTP/2), unchanged.
 */
export function unaryTransport(opts: {
  baseUrl: string;
  defaultTimeoutMs: number;
  interceptors: Interceptor[];
  /** The transport that serves streaming calls. */
  streaming: Transport;
  /**
   * The HTTP version unary calls travel over: 1.1 by default, 2 for a TLS base URL; streaming
   * calls always take HTTP/2.
   */
  httpVersion?: "1.1" | "2";
}): Transport {
  const urlBase = opts.baseUrl.replace(/\/$/, "");
  // A request's :path is its url past the scheme and authority, as written in the base URL
  // (which may carry a path prefix).
  const authorityEnd = urlBase.length - new URL(urlBase).pathname.replace(/\/$/, "").length;
  // Connect-ES's applyInterceptors, which the package does not export: the first wraps outermost.
  const chain = (next: (req: UnaryRequest) => Promise<UnaryResponse>) =>
    opts.interceptors.reduceRight((n, interceptor) => interceptor(n as never) as typeof next, next);

  // A TLS base URL (an admin plane behind a TLS ingress, say) keeps HTTP/2, as before this
  // project's calls moved to HTTP/1.1: inside the cluster calls are cleartext.
  const http2Only = opts.httpVersion === "2" || urlBase.startsWith("https:");
  const send = chain(http2Only ? http2Calls(opts.baseUrl, authorityEnd) : http1Calls(opts.baseUrl, authorityEnd));

  return {
    unary(method, signal, timeoutMs, header, message, contextValues) {
      const deadline = timeoutMs === undefined ? opts.defaultTimeoutMs : timeoutMs <= 0 ? undefined : timeoutMs;
      const req: UnaryRequest = {
        stream: false,
        service: method.parent,
        method,
        requestMethod: "POST",
        url: `${urlBase}/${method.parent.typeName}/${method.name}`,
        header: requestHeader(deadline, header),
        contextValues: (contextValues ?? createContextValues()) as ContextValues,
        message: isMessage(message, method.input) ? message : create(method.input, message as never),
        signal: signal ?? NEVER,
      };
      return send(req) as never;
    },
    stream: (...args) => opts.streaming.stream(...args),
  };
}

/**
 * What `@connectrpc/connect/protocol-connect`'s `requestHeader` sets on a unary binary call
 * (without a user agent, as before), on `CallHeaders` instead of a `Headers`.
 */
function requestHeader(timeoutMs: number | undefined, init: HeadersInit | undefined): Headers {
  const header = new CallHeaders(init);
  if (timeoutMs !== undefined) header.set("connect-timeout-ms", `${timeoutMs}`);
  header.set("content-type", "application/proto");
  header.set("connect-protocol-version", "1");
  return header;
}

function http2Calls(baseUrl: string, authorityEnd: number): (req: UnaryRequest) => Promise<UnaryResponse> {
  const sessions = new Http2SessionManager(baseUrl);
  return (req) => callHttp2(sessions, req.url.slice(authorityEnd), req);
}

function http1Calls(baseUrl: string, authorityEnd: number): (req: UnaryRequest) => Promise<UnaryResponse> {
  const pool = new Pool(new URL(baseUrl).origin, {
    connections: MAX_CONNECTIONS,
    // One call at a time per connection, as the server expects of HTTP/1.1.
    pipelining: 1,
    keepAliveTimeout: IDLE_CONNECTION_MS,
    keepAliveMaxTimeout: IDLE_CONNECTION_MS,
    // A call's only time limit is its deadline (callEnd), as over HTTP/2.
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  return (req) => callHttp1(pool, req.url.slice(authorityEnd), req);
}

/** The signal of a call its caller cannot cancel; never aborted, so shared. */
const NEVER = new AbortController().signal;

/** One call on an HTTP/2 session. */
function callHttp2(sessions: Http2SessionManager, path: string, req: UnaryRequest): Promise<UnaryResponse> {
  const body = toBinary(req.method.input, req.message);
  const headers: http2.OutgoingHttpHeaders = {};
  req.header.forEach((value, name) => {
    headers[name] = value;
  });
  return new Promise<UnaryResponse>((resolve, reject) => {
    let stream: http2.ClientHttp2Stream | undefined;
    const end = callEnd(req, resolve, reject, () => {
      if (stream && !stream.closed) stream.close(http2.constants.NGHTTP2_CANCEL);
    });
    if (end.settled()) return;
    sessions.request("POST", path, headers, {}).then(
      (s) => {
        stream = s;
        if (end.settled()) return void s.close(http2.constants.NGHTTP2_CANCEL);
        let status = 0;
        let response: [Headers, Headers] | undefined;
        const chunks: Buffer[] = [];
        s.once("response", (h) => {
          status = Number(h[":status"]);
          response = demux(h);
        });
        s.on("data", (chunk: Buffer) => {
          chunks.push(chunk);
          sessions.notifyResponseByteRead(s);
        });
        s.once("end", () => end.answer(status, response ?? [new CallHeaders(), new CallHeaders()], chunks));
        s.once("error", (err) => end.fail(fromNodeError(err)));
        s.once("close", () => {
          if (!end.settled()) end.fail(streamClosed(s.rstCode));
        });
        s.end(body);
      },
      (err) => end.fail(fromNodeError(err)),
    );
  });
}

/**
 * How long an idle HTTP/1.1 connection is kept for the next call: below the 72 s the server
 * keeps it (`rpc-listener.ts`), so a call is never sent on a connection the server is closing.
 */
const IDLE_CONNECTION_MS = 60_000;

/**
 * Connections to one service at most; calls beyond wait for one to be free (within their
 * deadline). HTTP/1.1 carries one call at a time per connection, so this bounds the calls in
 * flight to one service, and keeps a burst from opening thousands of connections to it.
 */
const MAX_CONNECTIONS = 256;

/**
 * One call over HTTP/1.1 keep-alive: the same request and answer as `callHttp2`'s, one
 * connection per call in flight, from undici's pool.
 *
 * Why undici, and its `dispatch`: it is Node's own HTTP/1.1 client (the engine of `fetch`),
 * and a call through it cost the caller 30–45 µs of CPU against 60–95 µs through
 * `http.request` and an `http.Agent` (docs/benchmarks/rpc.md, "Unary calls through undici").
 * `dispatch` takes the answer as callbacks, with no stream or AbortSignal per call; undici
 * marks it as the API that may change across its major versions, which the package.json range
 * pins.
 *
 * A pooled connection the service has just closed (it restarted, or drains on SIGTERM) can be
 * picked before its close is read, and the call then fails before any answer. A call the proto
 * declares free of side effects (`idempotency_level = NO_SIDE_EFFECTS`, every Get, List, Lookup,
 * Resolve and Poll), or a write whose signed context carries the request's `Idempotency-Key` (the
 * service stores its outcome with the write and replays it), is sent once more, on another
 * connection; any other call is `Unavailable` (the gateway's 503), since the service may have run
 * it before the connection went.
 */
function callHttp1(pool: Pool, path: string, req: UnaryRequest): Promise<UnaryResponse> {
  const body = toBinary(req.method.input, req.message);
  let headers: string[];
  if (req.header instanceof CallHeaders) headers = req.header.flat();
  else {
    headers = [];
    req.header.forEach((value, name) => {
      headers.push(name, value);
    });
  }
  const repeatable = req.method.idempotency !== MethodOptions_IdempotencyLevel.IDEMPOTENCY_UNKNOWN;
  return new Promise<UnaryResponse>((resolve, reject) => {
    // The connection's controller once undici has one for the call; a call cancelled before
    // that is aborted as it starts.
    let controller: Dispatcher.DispatchController | undefined;
    const end = callEnd(req, resolve, reject, () => controller?.abort(CANCELLED));
    const send = (attempt: number): void => {
      let status = 0;
      let response: [Headers, Headers] | undefined;
      const chunks: Buffer[] = [];
      pool.dispatch(
        { method: "POST", path, headers, body },
        {
          onRequestStart(c) {
            controller = c;
            if (end.settled()) c.abort(CANCELLED);
          },
          onResponseStart(_c, statusCode, h) {
            status = statusCode;
            response = demux(h);
          },
          onResponseData(_c, chunk) {
            chunks.push(chunk);
          },
          onResponseEnd() {
            end.answer(status, response ?? [new CallHeaders(), new CallHeaders()], chunks);
          },
          onResponseError(_c, err) {
            if (end.settled()) return;
            if (!lostConnection(err)) return end.fail(fromNodeError(err));
            if (
              attempt === 1 &&
              response === undefined &&
              (repeatable || contextHasIdempotencyKey(req.header.get(CONTEXT_HEADER)))
            )
              return send(2);
            // A connection lost before the answer is Unavailable, as a refused one is.
            end.fail(unavailable(err));
          },
        },
      );
    };
    if (!end.settled()) send(1);
  });
}

/** What a cancelled call's connection is aborted with; the caller has had its answer. */
const CANCELLED = new Error("the call was cancelled");

/**
 * The end of one call, reached once: its answer (`answer`, the response read whole), or a
 * failure, its deadline or its caller's abort (`fail`, which runs `cancel` to stop what is in
 * flight). The deadline is the `connect-timeout-ms` the request carries (set from the call's
 * timeout, and what the server enforces too), timed here without an AbortSignal per call.
 */
function callEnd(
  req: UnaryRequest,
  resolve: (res: UnaryResponse) => void,
  reject: (err: ConnectError) => void,
  cancel: () => void,
): {
  answer(status: number, headers: [Headers, Headers], chunks: Buffer[]): void;
  fail(err: ConnectError): void;
  settled(): boolean;
} {
  const timeout = req.header.get("connect-timeout-ms");
  const deadline = timeout === null ? undefined : Number(timeout);
  let timer: NodeJS.Timeout | undefined;
  let settled = false;
  const settle = (): boolean => {
    if (settled) return false;
    settled = true;
    if (timer) clearTimeout(timer);
    if (req.signal !== NEVER) req.signal.removeEventListener("abort", onAbort);
    return true;
  };
  const fail = (err: ConnectError): void => {
    if (!settle()) return;
    cancel();
    reject(err);
  };
  const onAbort = () => fail(ConnectError.from(req.signal.reason, Code.Canceled));
  if (req.signal.aborted) onAbort();
  else {
    if (req.signal !== NEVER) req.signal.addEventListener("abort", onAbort, { once: true });
    if (deadline !== undefined) {
      timer = setTimeout(
        () => fail(new ConnectError(`the operation timed out after ${deadline}ms`, Code.DeadlineExceeded)),
        deadline,
      );
    }
  }
  const answer = (status: number, [head, trailer]: [Headers, Headers], chunks: Buffer[]): void => {
    if (settled) return;
    try {
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      const response = respond(req, status, head, trailer, bytes);
      settle();
      resolve(response);
    } catch (err) {
      fail(ConnectError.from(err));
    }
  };
  return { answer, fail, settled: () => settled };
}

/** The response as Connect-ES's transport reads it: validated, trailers apart, errors from JSON. */
function respond(req: UnaryRequest, status: number, head: Headers, trailer: Headers, bytes: Buffer): UnaryResponse {
  const { isUnaryError, unaryError } = validateResponse(req.method.methodKind, true, status, head);
  if (isUnaryError) {
    const metadata = new Headers(head);
    for (const [name, value] of trailer) metadata.append(name, value);
    throw errorFromJsonBytes(bytes, metadata, unaryError!);
  }
  return {
    stream: false,
    service: req.service,
    method: req.method,
    header: head,
    message: fromBinary(req.method.output as DescMessage, bytes) as never,
    trailer,
  };
}

/**
 * The response's headers and, apart, its trailers: a unary Connect response carries trailers
 * as headers prefixed "trailer-" (what Connect-ES's trailerDemux does, in one pass).
 */
function demux(h: Record<string, string | string[] | undefined>): [Headers, Headers] {
  const head = new CallHeaders();
  const trailer = new CallHeaders();
  for (const name in h) {
    if (name.charCodeAt(0) === 58 /* ":" */) continue;
    const value = h[name];
    if (value === undefined) continue;
    const [to, key] = name.startsWith("trailer-") ? [trailer, name.slice(8)] : [head, name];
    if (Array.isArray(value)) for (const v of value) to.append(key, v);
    else to.append(key, value);
  }
  return [head, trailer];
}

/**
 * As Connect-ES's Node client classifies a failure to reach the server: a refused or
 * unresolvable connection is Unavailable (the gateway answers 503), a reset Aborted.
 */
function fromNodeError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  const code = (err as { code?: unknown } | undefined)?.code;
  if (
    code === "ECONNREFUSED" ||
    code === "ENOTFOUND" ||
    code === "EAI_AGAIN" ||
    code === "ETIMEDOUT" ||
    code === "UND_ERR_CONNECT_TIMEOUT"
  ) {
    return unavailable(err);
  }
  if (code === "ECONNRESET" || code === "ERR_STREAM_DESTROYED" || code === "ERR_HTTP2_INVALID_STREAM") {
    return withCause(ConnectError.from(err, Code.Aborted), err);
  }
  return withCause(ConnectError.from(err, Code.Internal), err);
}

/** A connection that went while a call was on it: reset, or closed by the other side. */
function lostConnection(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return code === "ECONNRESET" || code === "EPIPE" || code === "UND_ERR_SOCKET";
}

function unavailable(err: unknown): ConnectError {
  return withCause(ConnectError.from(err, Code.Unavailable), err);
}

function withCause(ce: ConnectError, cause: unknown): ConnectError {
  if (ce !== cause) ce.cause = cause;
  return ce;
}

/** A stream that closed before its response ended, by its HTTP/2 reset code. */
function streamClosed(rstCode: number): ConnectError {
  const { NGHTTP2_REFUSED_STREAM, NGHTTP2_CANCEL, NGHTTP2_ENHANCE_YOUR_CALM, NGHTTP2_NO_ERROR } = http2.constants;
  const detail = `http/2 stream closed with error code 0x${rstCode.toString(16)}`;
  switch (rstCode) {
    case NGHTTP2_REFUSED_STREAM:
      return new ConnectError(detail, Code.Unavailable);
    case NGHTTP2_CANCEL:
      return new ConnectError(detail, Code.Canceled);
    case NGHTTP2_ENHANCE_YOUR_CALM:
      return new ConnectError(detail, Code.ResourceExhausted);
    case NGHTTP2_NO_ERROR:
      return new ConnectError("http/2 stream closed before its response ended", Code.Unavailable);
    default:
      return new ConnectError(detail, Code.Internal);
  }
}
