import { lookup as dnsLookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { isIP } from "node:net";
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
 */
export function httpSender(options: SenderOptions): Sender {
  const lookup = guardedLookup(options.resolve, options.allowPrivateTargets);
  const agentOptions = options.ca && options.ca.length > 0 ? { ca: options.ca } : {};
  // One keep-alive pool per endpoint: a connection (and its TLS session) serves many
  // deliveries instead of one. The address check runs when a connection is made, which is
  // the only moment an address is chosen, so a reused connection was checked when it opened.
  const agents = new Map<string, http.Agent>();
  const agentFor = (url: URL, secure: boolean): http.Agent => {
    const key = `${url.protocol}//${url.host}`;
    let agent = agents.get(key);
    if (agent) {
      // Most recently used last: the map's order is the eviction order.
      agents.delete(key);
    } else {
      const common = {
        keepAlive: true,
        maxSockets: options.maxSocketsPerEndpoint ?? 32,
        maxFreeSockets: options.maxSocketsPerEndpoint ?? 32,
        timeout: IDLE_SOCKET_MS,
        scheduling: "lifo" as const,
        lookup,
      };
      agent = secure ? new https.Agent({ ...common, ...agentOptions }) : new http.Agent(common);
      if (agents.size >= MAX_POOLED_ENDPOINTS) {
        const [oldest] = agents.keys();
        if (oldest !== undefined) {
          agents.get(oldest)?.destroy();
          agents.delete(oldest);
        }
      }
    }
    agents.set(key, agent);
    return agent;
  };
  return (request) =>
    new Promise<SendResult>((resolve) => {
      const started = performance.now();
      const done = (outcome: AttemptOutcome) =>
        resolve({ ...outcome, durationMs: Math.round(performance.now() - started) });
      let url: URL;
      try {
        url = new URL(request.url);
      } catch {
        done({ status: undefined, retryAfter: undefined, error: "invalid endpoint URL" });
        return;
      }
      const secure = url.protocol === "https:";
      if (!secure && !(options.allowPrivateTargets && url.protocol === "http:")) {
        done({ status: undefined, retryAfter: undefined, error: "endpoint is not HTTPS" });
        return;
      }
      const literal = ipLiteral(url.hostname);
      if (literal !== undefined && !options.allowPrivateTargets && !isPublicAddress(literal)) {
        done({ status: undefined, retryAfter: undefined, error: "refused target: private or reserved address" });
        return;
      }
      const body = Buffer.from(request.body);
      const req = (secure ? https : http).request(url, {
        method: "POST",
        agent: agentFor(url, secure),
        headers: {
          ...request.headers,
          "content-type": "application/json",
          "content-length": String(body.length),
          "user-agent": USER_AGENT,
        },
      });
      const timer = setTimeout(
        () => req.destroy(new Error(`no response within ${options.timeoutMs} ms`)),
        options.timeoutMs,
      );
      req.on("response", (res) => {
        let read = 0;
        res.on("data", (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) res.destroy();
        });
        const finish = () => {
          clearTimeout(timer);
          const retryAfter = res.headers["retry-after"];
          done({
            status: res.statusCode,
            retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
            error: undefined,
          });
        };
        res.once("end", finish);
        res.once("close", finish);
        res.once("error", finish);
      });
      req.once("error", (err) => {
        clearTimeout(timer);
        const refused = err instanceof RefusedTarget || (err as { cause?: unknown }).cause instanceof RefusedTarget;
        done({
          status: undefined,
          retryAfter: undefined,
          error: refused ? `refused target: ${err.message}` : err.message,
        });
      });
      req.end(body);
    });
}
