export { buildGateway, type GatewayDeps } from "./app.js";
export { type GatewayConfig, gatewayConfigSpec } from "./config.js";
export { localFirstRateLimitStore, redisRateLimitStoreSyncedEvery } from "./rate-limit/local-first-store.js";
export { memoryRateLimitStore } from "./rate-limit/memory-store.js";
export {
  type RedisRateLimitStoreOptions,
  type RedisScriptClient,
  redisRateLimitStore,
} from "./rate-limit/redis-store.js";
export type { BucketState, RateLimitBucket, RateLimitResult, RateLimitStore } from "./rate-limit/store.js";
