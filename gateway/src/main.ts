// First, before any work: no allocation-site pretenuring (libs/kit/src/v8-flags.ts says why).
import "@platform/kit/v8-flags";
import { reusePort } from "@platform/kit/shared-port";
import { startTelemetry } from "@platform/kit/telemetry";

// Telemetry first. No library is instrumented: the gateway's spans are its own server span
// (http-server-span.ts) and kit's RPC interceptors; its Kafka traffic (the request log's
// batches, cache purges) is no hop of a request, and the hooks would cost every request
// (issue 51's bound: tracing at 10 % adds at most 10 % to a read; kit's telemetry.ts).
await startTelemetry("gateway", { instrumentLibraries: false });

const { systemClock } = await import("@platform/kit/clock");
const { loadConfigOrExit } = await import("@platform/kit/load-config-or-exit");
const { httpTransport } = await import("@platform/kit/connect");
const { KafkaBus } = await import("@platform/kit/kafka-bus");
const { createLogger } = await import("@platform/kit/logger");
const { stopTelemetry } = await import("@platform/kit/telemetry");
const { exitOnSignals } = await import("@platform/kit/shutdown");
const { quietLog } = await import("@platform/kit/quiet-log");
const { createClient } = await import("redis");
const { buildGateway, memoryRateLimitStore, redisRateLimitStoreSyncedEvery, redisStreamSlots } = await import(
  "./app.js"
);
const { gatewayConfigSpec } = await import("./config.js");

const config = loadConfigOrExit(gatewayConfigSpec);

const logger = createLogger("gateway", config.LOG_LEVEL);

// Without an offline queue a Redis outage fails the rate-limit check at once (and the
// limiter lets the request through) instead of holding every request until Redis returns.
const redis = config.REDIS_URL ? createClient({ url: config.REDIS_URL, disableOfflineQueue: true }) : undefined;
const quiet = quietLog(logger);
if (redis) {
  // The client reconnects by itself; while Redis is down each attempt fails, logged once a minute.
  redis.on("error", (err: unknown) => quiet.failure("redis", err, "redis unreachable", "error"));
  redis.on("ready", () => quiet.recovered("redis", "redis reachable again"));
  await redis.connect();
}
const rateLimitStore = redis ? redisStore(redis) : memoryRateLimitStore();

/** Rate-limit buckets in Redis: most hits decided here and sent in batches, unless RATE_LIMIT_SYNC_MS is 0. */
function redisStore(client: NonNullable<typeof redis>) {
  return redisRateLimitStoreSyncedEvery({
    // The store times its hits itself (redis-store.ts), without node-redis's per-command timer.
    client: client.withCommandOptions({ timeout: 0 }),
    prefix: config.RATE_LIMIT_PREFIX,
    syncMs: config.RATE_LIMIT_SYNC_MS,
    onFlushError: (err) =>
      quiet.failure("rate-limit-flush", err, "rate-limit hits not sent to Redis; not counted", "error"),
  });
}
const bus = config.KAFKA_BROKERS?.length
  ? new KafkaBus({ brokers: config.KAFKA_BROKERS, clientId: `gateway-${config.GATEWAY_INSTANCE_ID}`, logger })
  : undefined;

const upstream = { timeoutMs: config.UPSTREAM_READ_TIMEOUT_MS };
const app = await buildGateway({
  config,
  clock: systemClock,
  logger,
  // Calls without a deadline of their own (API key and grant look-ups, readiness) get the read one.
  transports: {
    identity: httpTransport(config.IDENTITY_URL, [], upstream),
    scheduling: httpTransport(config.SCHEDULING_URL, [], upstream),
    crm: httpTransport(config.CRM_URL, [], upstream),
    revenue: httpTransport(config.REVENUE_URL, [], upstream),
    analytics: httpTransport(config.ANALYTICS_URL, [], upstream),
    webhooks: httpTransport(config.WEBHOOKS_URL, [], upstream),
    requestLogs: httpTransport(config.REQUEST_LOGS_URL, [], upstream),
  },
  rateLimitStore,
  ...(bus ? { bus } : {}),
  ...(redis ? { streamSlots: redisStreamSlots({ client: redis, prefix: config.RATE_LIMIT_PREFIX }) } : {}),
});
// SO_REUSEPORT where the stack asks for it, so that a replacement binds the port before this
// instance stops (shared-port.ts).
await app.listen({ port: config.PORT, host: config.HOST, reusePort: reusePort() } as { port: number; host: string });

exitOnSignals({
  name: "gateway",
  drainTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
  async stop(signal) {
    logger.info({ signal }, "shutting down");
    // Stop accepting requests and finish the ones in flight before closing what they use.
    await app.close();
    await bus?.close();
    // Hits allowed here in the last moment are sent to Redis before it closes.
    await rateLimitStore.close?.();
    await redis?.close();
    await stopTelemetry();
  },
});
