import type { EventBus } from "@platform/kit/bus";
import type { Clock } from "@platform/kit/clock";
import { createCursorCodec } from "@platform/kit/cursor";
import type { Logger } from "@platform/kit/logger";
import Fastify, { type FastifyInstance } from "fastify";
import { AccessLogController, installAccessLog } from "./access-log.js";
import { AllowedMethods } from "./allowed-methods.js";
import { installDelegationAudit } from "./audit.js";
import { ApiKeyAuthenticator, KEY_REFRESHES, type KeyRecord } from "./auth.js";
import { type CachePurge, startCachePurge } from "./cache-purge.js";
import { clientErrorHandler } from "./client-errors.js";
import { type GatewayConfig, publicUrl, requestLogOptions } from "./config.js";
import { defaultConsoleDir, registerConsole } from "./console.js";
import { DelegationResolver, type GrantRecord } from "./delegation.js";
import { frameworkErrorHandler, installErrorHandling } from "./errors.js";
import { EVENT_STREAM_DEFAULTS, EventStreams } from "./event-stream.js";
import { admitFor, type GuardDeps, guardFor, recheckAccess } from "./guard.js";
import { registerHealth } from "./health.js";
import { installBodyReceipt, requestTimeoutMs } from "./http/body-receipt.js";
import { registerCompression } from "./http/compression.js";
import { installConditionalGet } from "./http/conditional.js";
import { limitConnections } from "./http/connection-limits.js";
import { sealPage } from "./http/cursor-binding.js";
import { installJsonBodies } from "./http/json-body.js";
import { strictQuery } from "./http/strict-query.js";
import { installHttpMetrics } from "./http-metrics.js";
import { installHttpServerSpan } from "./http-server-span.js";
import { LoadingCache } from "./loading-cache.js";
import { registerOpenApi } from "./openapi.js";
import { RateLimiter } from "./rate-limit/limiter.js";
import type { RateLimitStore } from "./rate-limit/store.js";
import { REQUEST_ID_HEADER, requestId } from "./request-id.js";
import { busSink, installRequestLog, type RequestLogSink } from "./request-log.js";
import { API_PREFIX, type RouteDeps, type RouteModule, type RouteSpec } from "./route.js";
import * as analytics from "./routes/analytics.js";
import * as apiKeys from "./routes/api-keys.js";
import * as composed from "./routes/composed.js";
import * as crm from "./routes/crm.js";
import * as events from "./routes/events.js";
import * as identity from "./routes/identity.js";
import * as requestLogs from "./routes/request-logs.js";
import * as revenue from "./routes/revenue.js";
import * as scheduling from "./routes/scheduling.js";
import * as webhooks from "./routes/webhooks.js";
import type { JsonSchema } from "./schemas/common.js";
import { problemSchema } from "./schemas/problem.js";
import { sharedSchemaSerializers } from "./serialization.js";
import { contextSigner, createServiceClients, type ServiceTransports } from "./services.js";
import { memoryStreamSlots, type StreamSlots } from "./stream-slots.js";
import { validatorCompiler } from "./validation.js";

export type { GatewayConfig } from "./config.js";
export { localFirstRateLimitStore, redisRateLimitStoreSyncedEvery } from "./rate-limit/local-first-store.js";
export { memoryRateLimitStore } from "./rate-limit/memory-store.js";
export { redisRateLimitStore } from "./rate-limit/redis-store.js";
export type { RateLimitStore } from "./rate-limit/store.js";
export type { LoggedRequest, RequestLogSink } from "./request-log.js";
export { memoryStreamSlots, redisStreamSlots, type StreamSlots } from "./stream-slots.js";

export interface GatewayDeps {
  config: GatewayConfig;
  clock: Clock;
  logger: Logger;
  /** In-process transports in the embedded runtime, HTTP/2 ones in the distributed one. */
  transports: ServiceTransports;
  rateLimitStore: RateLimitStore;
  /**
   * When given, identity's events purge the token and delegation caches, and requests made
   * on behalf of a child organization are audited on it.
   */
  bus?: EventBus;
  /** Leases of the open event streams per token; in-memory (this instance only) when unset. */
  streamSlots?: StreamSlots;
  /**
   * Where the request log's batches go (REQUEST_LOG on): the embedded runtime hands them to the
   * request-logs service in process; by default they are published on `bus`.
   */
  requestLogSink?: RequestLogSink;
}

declare module "fastify" {
  interface FastifyInstance {
    /** Drops cached tokens and grants now (the bus does it on revocation events). */
    purge: CachePurge;
  }
}

/**
 * Every context's routes, in the order of the OpenAPI document's paths; their shared schemas
 * are registered in the same order (the document's components).
 */
const ROUTE_MODULES: readonly RouteModule[] = [
  identity,
  scheduling,
  crm,
  revenue,
  analytics,
  webhooks,
  composed,
  events,
  apiKeys,
  requestLogs,
];

/** The shared schemas, problem first, then the modules' in their order; serializers compiled over them serve every build. */
const SHARED_SCHEMAS: readonly JsonSchema[] = [problemSchema, ...ROUTE_MODULES.flatMap((module) => module.schemas)];
const serializerCompiler = sharedSchemaSerializers(SHARED_SCHEMAS);

const CACHE_MAX_ENTRIES = 10_000;
const ACTING_ON_RESPONSE_HEADER = "platform-acting-on";

function paramsSchema(spec: RouteSpec): JsonSchema | undefined {
  const names = [...spec.url.matchAll(/:(\w+)/g)].map((m) => m[1]!);
  if (names.length === 0) return undefined;
  const properties: Record<string, JsonSchema> = {};
  for (const name of names) {
    const prefix = spec.ids?.[name];
    const prefixes = typeof prefix === "string" ? [prefix] : prefix;
    properties[name] = {
      type: "string",
      ...(prefixes ? { description: `Resource id (${prefixes.join(", ")}…)` } : {}),
    };
  }
  return { type: "object", properties, required: names };
}

function registerApiRoute(app: FastifyInstance, spec: RouteSpec, guard: GuardDeps): void {
  const params = spec.schema?.params ?? paramsSchema(spec);
  const querystring = strictQuery(spec.schema?.querystring);
  app.route({
    method: spec.method,
    url: API_PREFIX + spec.url,
    schema: {
      operationId: spec.operationId,
      summary: spec.summary,
      tags: [spec.tag],
      ...(params ? { params } : {}),
      querystring,
      ...(spec.schema?.body ? { body: spec.schema.body } : {}),
      ...(spec.schema?.response ? { response: spec.schema.response } : {}),
    },
    config: { platformRoute: spec },
    // Admission before the body is read; the other checks once it is parsed.
    onRequest: admitFor(spec, guard),
    preValidation: guardFor(spec, guard),
    handler: async (request, reply) => {
      if (!request.apiCall) throw new Error(`guard did not run for ${spec.operationId}`);
      const result = await spec.handler(request.apiCall, request, reply);
      return request.apiCall.page ? sealPage(guard.cursors, result, request.apiCall.page) : result;
    },
  });
}

/**
 * The edge of the platform: authenticates API keys, applies delegation, scopes and rate
 * limits, maps REST to the services' Connect RPCs and every failure to problem+json, and
 * serves the OpenAPI document generated from its routes.
 */
export async function buildGateway(deps: GatewayDeps): Promise<FastifyInstance> {
  const { config, clock, logger } = deps;
  const docsUrl = config.PLATFORM_DOCS_URL;
  const receipt = {
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    minBytesPerSecond: config.BODY_MIN_BYTES_PER_SECOND,
    graceMs: config.BODY_RECEIVE_GRACE_MS,
  };
  // Typed with pino's Logger the instance is not assignable to the plain FastifyInstance that
  // plugins and callers use; at run time it is the same object.
  const app = Fastify({
    loggerInstance: logger,
    genReqId: requestId,
    // The access log (access-log.ts) writes the one line a request gets, not fastify.
    logController: new AccessLogController({ requestIdLogLabel: "requestId" }),
    bodyLimit: config.BODY_LIMIT_BYTES,
    // Node's deadlines for headers and whole requests (fastify's default of 0 turns the second
    // off); checked every second instead of Node's 30 s. Bodies have their own, finer one.
    requestTimeout: requestTimeoutMs(config.HEADERS_TIMEOUT_MS, receipt),
    http: { headersTimeout: config.HEADERS_TIMEOUT_MS, connectionsCheckingInterval: 1_000 },
    frameworkErrors: frameworkErrorHandler(docsUrl),
    clientErrorHandler: clientErrorHandler(docsUrl, logger),
    // HEAD on every GET route (RFC 9110; load balancers probe with it): same hooks, no body.
    exposeHeadRoutes: true,
    // On a busy machine loading a plugin (swagger-ui's assets) can pass fastify's default
    // 10 s; a slow first start must not end in a crash.
    pluginTimeout: 60_000,
    // While it drains (SIGTERM), a request that still arrives on an open keep-alive connection
    // is served, with `Connection: close`, rather than refused with fastify's bare 503: it was
    // sent before the client could know, and its answer is what a rolling restart owes it.
    return503OnClosing: false,
  }) as unknown as FastifyInstance;

  const allowed = new AllowedMethods();
  app.addHook("onRoute", (route) => allowed.add(route.method, route.url));
  installErrorHandling(app, { docsUrl, allowed });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installJsonBodies(app);
  app.decorateRequest("apiCall", null);
  app.decorateRequest("admission", null);
  app.decorateRequest("keyToken", null);
  app.decorateReply("problemName", null);
  installBodyReceipt(app, receipt);
  const keyless = limitConnections(app.server, {
    maxConnections: config.MAX_CONNECTIONS,
    keylessPerAddress: config.KEYLESS_CONNECTIONS_PER_ADDRESS,
  });
  installHttpMetrics(app);
  installHttpServerSpan(app);
  if (config.ACCESS_LOG) installAccessLog(app, logger);
  installConditionalGet(app);
  // Callback hooks, not async ones: no promise per request on the hot path.
  app.addHook("onSend", (request, reply, payload, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    if (request.apiCall?.actingOn && reply.statusCode < 400) {
      reply.header(ACTING_ON_RESPONSE_HEADER, request.apiCall.actingOn);
    }
    done(null, payload);
  });

  if (deps.bus) installDelegationAudit(app, { bus: deps.bus, clock, logger });
  const requestLogSink = deps.requestLogSink ?? (deps.bus ? busSink(deps.bus, clock) : undefined);
  if (config.REQUEST_LOG && requestLogSink) {
    installRequestLog(app, { sink: requestLogSink, clock, logger, options: requestLogOptions(config) });
  }

  const clients = createServiceClients(deps.transports);
  const sign = contextSigner(config.PLATFORM_CONTEXT_SECRET, clock);
  const now = () => clock.now().getTime();
  const authenticator = new ApiKeyAuthenticator({
    clients,
    sign,
    clock,
    cache: new LoadingCache<KeyRecord>({
      max: CACHE_MAX_ENTRIES,
      ttlMs: config.TOKEN_CACHE_TTL_MS,
      now,
      ...KEY_REFRESHES,
    }),
  });
  const delegation = new DelegationResolver({
    clients,
    sign,
    cache: new LoadingCache<GrantRecord>({ max: CACHE_MAX_ENTRIES, ttlMs: config.TOKEN_CACHE_TTL_MS, now }),
  });
  const streams = new EventStreams({
    slots: deps.streamSlots ?? memoryStreamSlots(),
    logger,
    now,
    options: {
      ...EVENT_STREAM_DEFAULTS,
      maxStreamsPerToken: config.EVENTS_STREAM_MAX_PER_TOKEN,
      pollMs: config.EVENTS_STREAM_POLL_MS,
      heartbeatMs: config.EVENTS_STREAM_HEARTBEAT_MS,
    },
  });
  const purge: CachePurge = {
    apiKey: (keyHash, tokenId) => {
      authenticator.purge(keyHash);
      streams.revoke(tokenId);
    },
    delegation: (parentOrgId, childOrgId) => {
      delegation.purge(parentOrgId, childOrgId);
      streams.recheckAll();
    },
  };
  app.decorate("purge", purge);
  const guard: GuardDeps = {
    authenticator,
    delegation,
    limiter: new RateLimiter(deps.rateLimitStore, logger),
    clock,
    sign,
    cursors: createCursorCodec(config.PLATFORM_CURSOR_SECRET),
    timeouts: {
      read: config.UPSTREAM_READ_TIMEOUT_MS,
      availability: config.UPSTREAM_AVAILABILITY_TIMEOUT_MS,
      write: config.UPSTREAM_WRITE_TIMEOUT_MS,
    },
    keyless,
  };

  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  await registerCompression(app);
  await registerOpenApi(app, { docsUrl, serverUrl: publicUrl(config) });
  // Open streams would hold the server open: end them (clients resume elsewhere with Last-Event-ID).
  app.addHook("preClose", async () => streams.closeAll());
  registerHealth(app, { clients, sign, docsUrl });
  registerConsole(app, { dir: config.CONSOLE_DIR ?? defaultConsoleDir() });
  const routeDeps: RouteDeps = { clock, streams, recheck: (spec, request) => recheckAccess(spec, guard, request) };
  for (const module of ROUTE_MODULES) {
    for (const spec of module.routes(clients, routeDeps)) registerApiRoute(app, spec, guard);
  }

  if (deps.bus) {
    const purging = await startCachePurge(deps.bus, { instanceId: config.GATEWAY_INSTANCE_ID, purge, logger });
    app.addHook("onClose", () => purging.close());
  }
  await app.ready();
  return app;
}
