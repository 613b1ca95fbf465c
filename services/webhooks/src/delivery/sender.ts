import { lookup as dnsLookup } from "node:dns/promises";
import type { LookupFunction } from "node:net";
import { isIP } from "node:net";
import { context, propagation, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { tracing } from "@platform/kit/tracing";
import { Pool } from "undici";
import { ipLiteral, isPublicAddress } from "../domain/address.js";
import type { Resolver } from "../domain/endpoint.js";
import type { AttemptOutcome } from "../domain/retry.js";

/** The system resolver: every address of a name, as the OS resolves it. */
export const systemResolver: Resolver = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

export interface SendRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface SendResult extends AttemptOutcome {
  durationMs: number;
}

export type Sender = (request: SendRequest) => Promise<SendResult>;

export interface SenderOptions {
  allowPrivateTargets: boolean;
  /**
   * Connections kept open per endpoint (scheme, host, port) for reuse; set it to the
   * per-endpoint cap, so every attempt in flight to an endpoint has a connection of its own.
   */
  maxSocketsPerEndpoint?: number;
  resolve: Resolver;
  /** Extra trusted CAs (PEM), added to Node's bundled roots: test receivers with their own CA. */
  ca?: string[];
  timeoutMs: number;
}

const USER_AGENT = "Platform-Webhooks/1";
/** Response bodies are read (so the connection can be reused) but never kept beyond this. */
const MAX_RESPONSE_BYTES = 64 * 1024;
/** Endpoints whose connections are kept; the least recently used one's are closed past this. */
const MAX_POOLED_ENDPOINTS = 1000;
/** An idle kept-alive connection is closed after this (receivers commonly close theirs at 5 s or more). */
const IDLE_SOCKET_MS = 4000;

class RefusedTarget extends Error {}

/**
 * The connect-time address check: the name is resolved here, by us, and a private answer
 * refuses the connection. Validating only at subscription time would let a name re-pointed
 * to an internal address later (DNS rebinding) reach it.
 */
function guardedLookup(resolve: Resolver, allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const raw = typeof options === "object" ? options.family : options;
        const family = raw === "IPv4" ? 4 : raw === "IPv6" ? 6 : Number(raw ?? 0);
        const candidates = addresses.filter((a) => family === 0 || isIP(a) === family);
        if (candidates.length === 0) {
          callback(Object.assign(new Error(`${hostname} does not resolve`), { code: "ENOTFOUND" }), "", 4);
          return;
        }
        if (!allowPrivate && !addresses.every(isPublicAddress)) {
          callback(new RefusedTarget(`${hostname} resolves to a private or reserved address`), "", 4);
          return;
        }
        if (typeof options === "object" && options.all) {
          (callback as unknown as (e: null, all: { address: string; family: number }[]) => void)(
            null,
            candidates.map((address) => ({ address, family: isIP(address) })),
          );
          return;
        }
        const [address] = candidates as [string];
        callback(null, address, isIP(address));
      },
      (err: Error) => callback(err as NodeJS.ErrnoException, "", 4),
    );
  };
}

/**
 * POSTs a webhook: HTTPS (http only where private targets are allowed), redirects never
 * followed (a 3xx is a failure), the resolved address checked at connect time, the whole
 * exchange bounded by the timeout. Never throws: every failure is an outcome.
 *
 * undici's `Pool` rather than `node:http`: half the client's CPU per request in isolation, about
 * 5 % of the worker's CPU per delivery (docs/benchmarks/events.md, "Start-up and the webhook POST").
 */
export function httpSender(options: SenderOptions): Sender {
  const lookup = guardedLookup(options.resolve, options.allowPrivateTargets);
  const connections = options.maxSocketsPerEndpoint ?? 32;
  const connect = options.ca && options.ca.length > 0 ? { lookup, ca: options.ca } : { lookup };
  // One keep-alive pool per endpoint: a connection (and its TLS session) serves many
  // deliveries instead of one. The address check runs when a connection is made, which is
  // the only moment an address is chosen, so a reused connection was checked when it opened.
  const pools = new Map<string, Pool>();
  const poolFor = (origin: string): Pool => {
    let pool = pools.get(origin);
    if (pool) {
      // Most recently used last: the map's order is the eviction order.
      pools.delete(origin);
    } else {
      pool = new Pool(origin, {
        connections,
        connect,
        keepAliveTimeout: IDLE_SOCKET_MS,
        keepAliveMaxTimeout: IDLE_SOCKET_MS,
        // The sender's own timer bounds the exchange; these only must not cut it shorter.
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      if (pools.size >= MAX_POOLED_ENDPOINTS) {
        const [oldest] = pools.keys();
        if (oldest !== undefined) {
          pools
            .get(oldest)
            ?.destroy()
            .catch(() => {});
          pools.delete(oldest);
        }
      }
    }
    pools.set(origin, pool);
    return pool;
  };
  return async (request) => {
    const started = performance.now();
    const done = (outcome: AttemptOutcome): SendResult => ({
      ...outcome,
      durationMs: Math.round(performance.now() - started),
    });
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return done({ status: undefined, retryAfter: undefined, error: "invalid endpoint URL" });
    }
    const secure = url.protocol === "https:";
    if (!secure && !(options.allowPrivateTargets && url.protocol === "http:")) {
      return done({ status: undefined, retryAfter: undefined, error: "endpoint is not HTTPS" });
    }
    const literal = ipLiteral(url.hostname);
    if (literal !== undefined && !options.allowPrivateTargets && !isPublicAddress(literal)) {
      return done({ status: undefined, retryAfter: undefined, error: "refused target: private or reserved address" });
    }
    const span = tracing() ? postSpan(url) : undefined;
    const abort = new AbortController();
    const timer = setTimeout(
      () => abort.abort(new Error(`no response within ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
    try {
      const res = await poolFor(url.origin).request({
        method: "POST",
        path: url.pathname + url.search,
        headers: withTraceparent(span, {
          ...request.headers,
          "content-type": "application/json",
          "user-agent": USER_AGENT,
        }),
        body: request.body,
        signal: abort.signal,
      });
      // Read (so the connection can be reused) but never kept; past the limit it is closed.
      await res.body.dump({ limit: MAX_RESPONSE_BYTES }).catch(() => {});
      const retryAfter = res.headers["retry-after"];
      span?.setAttribute("http.response.status_code", res.statusCode);
      if (res.statusCode >= 400) span?.setStatus({ code: SpanStatusCode.ERROR });
      return done({
        status: res.statusCode,
        retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
        error: undefined,
      });
    } catch (err) {
      const cause = abort.signal.aborted ? abort.signal.reason : err;
      const refused = cause instanceof RefusedTarget || (cause as { cause?: unknown }).cause instanceof RefusedTarget;
      const message = cause instanceof Error ? cause.message : String(cause);
      span?.setAttribute("error.type", cause instanceof Error ? cause.name : "Error");
      span?.setStatus({ code: SpanStatusCode.ERROR, message });
      return done({
        status: undefined,
        retryAfter: undefined,
        error: refused ? `refused target: ${message}` : message,
      });
    } finally {
      clearTimeout(timer);
      span?.end();
    }
  };
}

const tracer = () => trace.getTracer("@platform/webhooks");

/**
 * The POST's client span, a child of the delivery's span (the active context), as OpenTelemetry's
 * HTTP instrumentation makes one for `node:http`; undici's requests are not instrumented.
 */
function postSpan(url: URL): Span {
  const secure = url.protocol === "https:";
  return tracer().startSpan(
    "POST",
    {
      kind: SpanKind.CLIENT,
      attributes: {
        "http.request.method": "POST",
        "url.full": url.href,
        "server.address": url.hostname,
        "server.port": Number(url.port || (secure ? 443 : 80)),
      },
    },
    context.active(),
  );
}

/** The receiver gets the POST span's context in `traceparent` (only while tracing is on, as before). */
function withTraceparent(span: Span | undefined, headers: Record<string, string>): Record<string, string> {
  if (span) propagation.inject(trace.setSpan(context.active(), span), headers);
  return headers;
}
