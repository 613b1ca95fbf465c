import { startTelemetry } from "@platform/kit/telemetry";

// Telemetry first, so instrumentation sees every module that loads after it.
startTelemetry("gateway");

const { systemClock } = await import("@platform/kit/clock");
const { ConfigError, loadConfig } = await import("@platform/kit/config");
const { httpTransport } = await import("@platform/kit/connect");
const { KafkaBus } = await import("@platform/kit/kafka-bus");
const { createLogger } = await import("@platform/kit/logger");
const { stopTelemetry } = await import("@platform/kit/telemetry");
const { createClient } = await import("redis");
const { buildGateway, memoryRateLimitStore, redisRateLimitStore, redisStreamSlots } = await import("./app.js");
const { gatewayConfigSpec } = await import("./config.js");

let config: ReturnType<typeof loadConfig<typeof gatewayConfigSpec>>;
try {
  config = loadConfig(gatewayConfigSpec);
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(1);
  }
  throw err;
}

const logger = createLogger("gateway", config.LOG_LEVEL);

// Without an offline queue a Redis outage fails the rate-limit check at once (and the
// limiter lets the request through) instead of holding every request until Redis returns.
const redis = config.REDIS_URL ? createClient({ url: config.REDIS_URL, disableOfflineQueue: true }) : undefined;
if (redis) {
  redis.on("error", (err: unknown) => logger.error({ err }, "redis error"));
  await redis.connect();
}
const bus = config.KAFKA_BROKERS?.length
  ? new KafkaBus({ brokers: config.KAFKA_BROKERS, clientId: `gateway-${config.GATEWAY_INSTANCE_ID}`, logger })
  : undefined;

const app = await buildGateway({
  config,
  clock: systemClock,
  logger,
  transports: {
    identity: httpTransport(config.IDENTITY_URL),
    scheduling: httpTransport(config.SCHEDULING_URL),
    crm: httpTransport(config.CRM_URL),
    revenue: httpTransport(config.REVENUE_URL),
    analytics: httpTransport(config.ANALYTICS_URL),
    webhooks: httpTransport(config.WEBHOOKS_URL),
  },
  rateLimitStore: redis
    ? redisRateLimitStore({ client: redis, prefix: config.RATE_LIMIT_PREFIX })
    : memoryRateLimitStore(),
  ...(bus ? { bus } : {}),
  ...(redis ? { streamSlots: redisStreamSlots({ client: redis, prefix: config.RATE_LIMIT_PREFIX }) } : {}),
});
await app.listen({ port: config.PORT, host: config.HOST });

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "shutting down");
  // Stop accepting requests and finish the ones in flight before closing what they use.
  await app.close();
  await bus?.close();
  await redis?.close();
  await stopTelemetry();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
