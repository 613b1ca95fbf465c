import { randomBytes } from "node:crypto";
import { type ConfigOf, type ConfigSpec, commonConfig, parse } from "@platform/kit/config";
import { connectAddress } from "@platform/kit/service-config";

/** Unset stays `undefined`, and the type says so. */
const optional =
  <T>(p: (raw: string) => T) =>
  (raw: string): T | undefined =>
    p(raw);

/**
 * A service's base URL. kit's client sends unary calls over HTTP/1.1 keep-alive connections and
 * streams over HTTP/2 (`httpTransport` in libs/kit/src/connect.ts); the service's port takes both.
 */
const serviceUrl = (service: string, port: number) =>
  connectAddress(`Base URL of the ${service} service (Connect: unary calls over HTTP/1.1, streams over HTTP/2)`, port);

/** Settings of the gateway process. */
export const gatewayConfigSpec = {
  ...commonConfig,
  PORT: { description: "HTTP port the gateway listens on", default: 8080, parse: parse.port },
  HOST: { description: "Interface the gateway listens on", default: "127.0.0.1", parse: parse.string },
  IDENTITY_URL: serviceUrl("identity", 7101),
  SCHEDULING_URL: serviceUrl("scheduling", 7102),
  CRM_URL: serviceUrl("crm-data", 7103),
  REVENUE_URL: serviceUrl("revenue", 7104),
  ANALYTICS_URL: serviceUrl("analytics", 7105),
  WEBHOOKS_URL: serviceUrl("webhooks", 7106),
  REQUEST_LOGS_URL: serviceUrl("request-logs", 7107),
  REDIS_URL: {
    description: "Redis for the rate-limit buckets shared by all gateway instances; in-memory buckets when unset",
    default: undefined,
    sensitive: true,
    parse: optional(parse.url),
  },
  RATE_LIMIT_PREFIX: {
    description: "Prefix of the gateway's rate-limit keys in Redis",
    default: "platform:rl:",
    parse: parse.string,
  },
  RATE_LIMIT_SYNC_MS: {
    description:
      "With REDIS_URL: how long a hit allowed by this instance (far from its limit) waits before it is sent to Redis with the others; 0 checks every hit in Redis",
    default: 10,
    parse: parse.int(0, 1000),
  },
  KAFKA_BROKERS: {
    description: "Comma-separated Kafka brokers; token revocations and grant changes purge the caches when set",
    default: undefined,
    parse: optional(parse.list),
  },
  PLATFORM_PUBLIC_URL: {
    description:
      "Address integrators reach this API at (scheme and host, no path), for the OpenAPI document's servers; http://HOST:PORT when unset",
    default: undefined,
    parse: optional(parse.url),
  },
  CONSOLE_DIR: {
    description:
      "Directory of the developer console's build (npm run build writes dist/console), served at /console; dist/console when unset",
    default: undefined,
    parse: optional(parse.string),
  },
  BODY_LIMIT_BYTES: { description: "Largest accepted request body in bytes", default: 1_048_576, parse: parse.int(1) },
  HEADERS_TIMEOUT_MS: {
    description:
      "Time a client has to send a request's headers (Node's server.headersTimeout); 408 request-timeout past it, and the connection closes",
    default: 10_000,
    parse: parse.int(1000, 120_000),
  },
  BODY_MIN_BYTES_PER_SECOND: {
    description:
      "Slowest accepted request body: a body must arrive within BODY_RECEIVE_GRACE_MS plus its size (Content-Length, or BODY_LIMIT_BYTES when chunked) at this rate; 408 request-timeout past it, and the connection closes",
    default: 102_400,
    parse: parse.int(1024),
  },
  BODY_RECEIVE_GRACE_MS: {
    description: "Added to every body's receive deadline (round trips, a slow start)",
    default: 1_000,
    parse: parse.int(0, 60_000),
  },
  MAX_CONNECTIONS: {
    description:
      "Open connections the gateway accepts at once (Node's server.maxConnections); connections past it are closed at once, unanswered",
    default: 8_192,
    parse: parse.int(1),
  },
  KEYLESS_CONNECTIONS_PER_ADDRESS: {
    description:
      "Connections one client address may hold open before any of its requests carried a valid API key; a request on a connection past it without a key gets 429 rate-limit-exceeded. 0 turns the cap off (behind a proxy every client shares its address)",
    default: 32,
    parse: parse.int(0),
  },
  TOKEN_CACHE_TTL_MS: {
    description: "How long a resolved API key or delegation grant is cached (revocation events purge sooner)",
    default: 30_000,
    parse: parse.int(0),
  },
  ACCESS_LOG: {
    description:
      "Log one line per request (method, route, status, duration, request and token ids); false turns it off",
    default: true,
    parse: parse.bool,
  },
  // Deadlines of the calls to the services, per rate-limit tier of the route (the route class).
  // Below the signed context's 60 s lifetime, so a service never sees a context older than
  // the call that carries it. A call past its deadline is answered 504 upstream-timeout.
  UPSTREAM_READ_TIMEOUT_MS: {
    description:
      "Deadline of a service call for the read routes and the gateway's own look-ups (API keys, grants, readiness); 504 upstream-timeout past it",
    default: 10_000,
    parse: parse.int(100, 55_000),
  },
  UPSTREAM_AVAILABILITY_TIMEOUT_MS: {
    description: "Deadline of a service call for the availability routes (slot generation can be long)",
    default: 20_000,
    parse: parse.int(100, 55_000),
  },
  UPSTREAM_WRITE_TIMEOUT_MS: {
    description:
      "Deadline of a service call for the write routes; a write past it is rolled back by the service, so a retry with the same Idempotency-Key is safe",
    default: 15_000,
    parse: parse.int(100, 55_000),
  },
  EVENTS_STREAM_MAX_PER_TOKEN: {
    description:
      "GET /events/stream: how many streams one token may hold open at once (across instances with REDIS_URL)",
    default: 5,
    parse: parse.int(1),
  },
  EVENTS_STREAM_POLL_MS: {
    description: "GET /events/stream: pause between polls of the event log once a stream has caught up",
    default: 1000,
    parse: parse.int(10),
  },
  EVENTS_STREAM_HEARTBEAT_MS: {
    description: "GET /events/stream: interval of heartbeat comments (and of re-checking the stream's API key)",
    default: 15_000,
    parse: parse.int(100),
  },
  REQUEST_LOG: {
    description:
      "Record a summary of every request made with a valid API key in the org's request log (GET /request-logs), published off the request path; off turns it off",
    default: true,
    parse: parse.bool,
  },
  REQUEST_LOG_FLUSH_MS: {
    description: "Request log: longest a summary waits in the gateway's buffer before its batch is published",
    default: 100,
    parse: parse.int(10, 10_000),
  },
  REQUEST_LOG_BATCH: {
    description: "Request log: summaries per published batch (a full batch goes out at once)",
    default: 500,
    parse: parse.int(1, 5_000),
  },
  REQUEST_LOG_BUFFER: {
    description:
      "Request log: summaries the gateway holds while the bus is slow or down; beyond it they are dropped (counted in platform.request_log.dropped), never the request",
    default: 10_000,
    parse: parse.int(1, 1_000_000),
  },
  GATEWAY_INSTANCE_ID: {
    description: "Name of this gateway instance; its consumer group for cache purges is gateway-<id>",
    default: randomBytes(6).toString("hex"),
    parse: parse.string,
  },
} satisfies ConfigSpec;

export type GatewayConfig = ConfigOf<typeof gatewayConfigSpec>;

/** The API's address for the OpenAPI `servers`: PLATFORM_PUBLIC_URL, else where the gateway listens. */
export function publicUrl(config: Pick<GatewayConfig, "PLATFORM_PUBLIC_URL" | "HOST" | "PORT">): string {
  if (config.PLATFORM_PUBLIC_URL) return config.PLATFORM_PUBLIC_URL.replace(/\/+$/, "");
  // A wildcard address is where the gateway listens, not one a client can call.
  const host = config.HOST === "0.0.0.0" || config.HOST === "::" ? "127.0.0.1" : config.HOST;
  return `http://${host.includes(":") ? `[${host}]` : host}:${config.PORT}`;
}

/** The request log buffer's settings (request-log.ts). */
export function requestLogOptions(
  config: Pick<GatewayConfig, "REQUEST_LOG_FLUSH_MS" | "REQUEST_LOG_BATCH" | "REQUEST_LOG_BUFFER">,
) {
  return {
    flushMs: config.REQUEST_LOG_FLUSH_MS,
    batchSize: config.REQUEST_LOG_BATCH,
    maxBuffered: Math.max(config.REQUEST_LOG_BUFFER, config.REQUEST_LOG_BATCH),
  };
}
