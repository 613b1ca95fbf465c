import { join } from "node:path";
import { buildGateway, type GatewayConfig, memoryRateLimitStore, type RequestLogSink } from "@platform/gateway/app";
import type { ServiceTransports } from "@platform/gateway/services";
import { sandboxKeys } from "@platform/identity/server";
import type { Subscription } from "@platform/kit/bus";
import { type Clock, systemClock } from "@platform/kit/clock";
import type { Routes } from "@platform/kit/connect";
import {
  adminSecretInterceptor,
  errorInterceptor,
  inProcessTransport,
  type RunningServer,
  serveConnect,
  trustInterceptor,
} from "@platform/kit/connect";
import {
  type DataDirHealth,
  type DiskFailure,
  guardedDb,
  WatchedNodeFS,
  watchDataDirectory,
} from "@platform/kit/data-dir-health";
import type { Db } from "@platform/kit/db";
import { openPglite, pgliteDb } from "@platform/kit/db";
import { InProcessBus } from "@platform/kit/in-process-bus";
import { startInProcessRelay } from "@platform/kit/in-process-relay";
import type { Logger } from "@platform/kit/logger";
import { kitMigrations, migrate } from "@platform/kit/migrate";
import type { OutboxRelay } from "@platform/kit/outbox-relay";
import type { SandboxKeyInfo } from "@platform/sandbox";
import type { FastifyInstance } from "fastify";
import { lockDataDirectory } from "./data-lock.js";
import type { EmbeddedParts, EmbeddedService } from "./embedded-service.js";
import { analyticsEmbedded } from "./services/analytics.js";
import { crmEmbedded } from "./services/crm.js";
import { identityEmbedded } from "./services/identity.js";
import { requestLogsEmbedded } from "./services/request-logs.js";
import { revenueEmbedded } from "./services/revenue.js";
import { schedulingEmbedded } from "./services/scheduling.js";
import { webhooksEmbedded } from "./services/webhooks.js";

/**
 * Every context, in start order: a service may call the ones before it (revenue calls
 * crm-data and identity), and sandboxes are seeded in this order too.
 */
function embeddedServices(opts: EmbeddedOptions): EmbeddedService[] {
  return [
    identityEmbedded,
    schedulingEmbedded(opts),
    crmEmbedded,
    revenueEmbedded,
    analyticsEmbedded,
    webhooksEmbedded,
    requestLogsEmbedded,
  ];
}

/** Answers every RPC "unimplemented", which the gateway renders as 501 not-implemented. */
const NO_ROUTES: Routes = () => {};

export interface EmbeddedOptions {
  /** PGlite data directory; in memory when unset. */
  dataDir?: string;
  clock?: Clock;
  logger: Logger;
  gateway: GatewayConfig;
  sandboxSeed: string;
  seedSandbox: boolean;
  adminSecret: string;
  /** Port of the admin plane; undefined keeps it closed (tests). */
  adminPort?: number;
  adminHost?: string;
  /** HMAC secret of slot tokens; a development default when unset. */
  slotTokenSecret?: string;
  /** Base of the reschedule and cancel links in meetings. */
  bookingBaseUrl?: string;
  /** Settings of the services other than identity and scheduling (their own variables); process.env when unset. */
  env?: NodeJS.ProcessEnv;
  /** How often the data directory is checked for writes (DISK_CHECK_INTERVAL_MS); 1 s when unset. */
  diskCheckIntervalMs?: number;
  /**
   * The database engine met a write it could not make and cannot continue: the caller exits
   * (non-zero, naming the failure). Called synchronously, inside the engine's failed write.
   */
  onEngineFailure?: (failure: DiskFailure) => void;
}

export interface EmbeddedPlatform {
  app: FastifyInstance;
  bus: InProcessBus;
  admin?: RunningServer;
  /** True when this start created the sandbox. */
  seeded: boolean;
  /** The sandbox's named keys with their current state. */
  sandboxKeys(): Promise<SandboxKeyInfo[]>;
  /** Publishes every pending outbox row of every service now (tests). */
  drainOutbox(): Promise<number>;
  /** Each service's database (keyed by schema name), for the benchmark's fixtures and for tests. */
  dbs: { identity: Db; scheduling: Db } & Record<string, Db>;
  close(): Promise<void>;
}

/**
 * The whole platform in one process: one PGlite instance with a schema per service, the
 * in-process bus, in-memory rate limits, and Connect calls through in-process transports
 * that still sign and verify the request context exactly as over the network.
 */
export async function createEmbeddedPlatform(opts: EmbeddedOptions): Promise<EmbeddedPlatform> {
  const clock = opts.clock ?? systemClock;
  const { logger } = opts;
  // One process per data directory: refused here, before anything is opened or written.
  const lock = opts.dataDir ? lockDataDirectory(opts.dataDir) : undefined;
  const pgDir = opts.dataDir ? join(opts.dataDir, "pglite") : undefined;
  let health: DataDirHealth | undefined;
  let pglite: Awaited<ReturnType<typeof openPglite>>;
  try {
    const watchedFs = pgDir
      ? new WatchedNodeFS(pgDir, (failure) => {
          health?.report(failure);
          opts.onEngineFailure?.(failure);
        })
      : undefined;
    pglite = await openPglite(pgDir, watchedFs);
  } catch (err) {
    lock?.release();
    throw err;
  }
  // Once PGlite made its directory: while it cannot be written, statements fail at once (503)
  // instead of reaching an engine that would PANIC on the write.
  if (pgDir) health = watchDataDirectory({ dir: pgDir, logger, intervalMs: opts.diskCheckIntervalMs });
  const dbOf = (schema: string) => {
    const db = pgliteDb(pglite, schema);
    return health ? guardedDb(db, health) : db;
  };
  const bus = new InProcessBus();

  const serverInterceptors = [errorInterceptor(logger), trustInterceptor(opts.gateway.PLATFORM_CONTEXT_SECRET, clock)];
  const cursorSecret = opts.gateway.PLATFORM_CURSOR_SECRET;

  // Until a service starts, its transport answers every RPC "unimplemented".
  const transports: ServiceTransports = {
    identity: inProcessTransport(NO_ROUTES, serverInterceptors),
    scheduling: inProcessTransport(NO_ROUTES, serverInterceptors),
    crm: inProcessTransport(NO_ROUTES, serverInterceptors),
    revenue: inProcessTransport(NO_ROUTES, serverInterceptors),
    analytics: inProcessTransport(NO_ROUTES, serverInterceptors),
    webhooks: inProcessTransport(NO_ROUTES, serverInterceptors),
    requestLogs: inProcessTransport(NO_ROUTES, serverInterceptors),
  };
  const dbs: Record<string, Db> = {};
  const relays: OutboxRelay[] = [];
  const consumers: Subscription[] = [];
  const started: { name: EmbeddedService["name"]; parts: EmbeddedParts }[] = [];
  for (const service of embeddedServices(opts)) {
    const db = dbOf(service.schema);
    await migrate(db, [kitMigrations, service.migrations]);
    dbs[service.schema] = db;
    const parts = await service.start({
      db,
      bus,
      clock,
      logger,
      cursorSecret,
      contextSecret: opts.gateway.PLATFORM_CONTEXT_SECRET,
      sandboxSeed: opts.sandboxSeed,
      env: opts.env ?? process.env,
      transports: { ...transports },
    });
    transports[service.name] = inProcessTransport(parts.routes, serverInterceptors);
    consumers.push(...(parts.consumers ?? []));
    started.push({ name: service.name, parts });
  }
  // Once every consumer group has subscribed: a relay marks a row published when the groups
  // subscribed at that moment have handled its event (rows a crash left unpublished go out now).
  for (const db of Object.values(dbs)) relays.push(startInProcessRelay({ db, bus, logger, clock }));

  // The platform counts as seeded by this start when identity created the sandbox organization.
  let seeded = false;
  if (opts.seedSandbox) {
    for (const { name, parts } of started) {
      const created = await parts.seed?.();
      if (name === "identity") seeded = created === true;
    }
  }

  const platformDbs = dbs as EmbeddedPlatform["dbs"];
  const app = await buildGateway({
    config: opts.gateway,
    clock,
    logger,
    transports,
    rateLimitStore: memoryRateLimitStore(),
    bus,
    // Batches go straight to the request-logs service: the in-process bus keeps every message
    // it carries in memory, which one message per 100 ms of traffic would grow without end.
    ...requestLogSinkOf(started),
  });

  async function closeParts() {
    await app.close();
    for (const c of consumers) await c.close();
    for (const relay of relays) await relay.stop();
    await bus.close();
    health?.stop();
    await pglite.close();
    lock?.release();
  }

  let admin: Awaited<ReturnType<typeof serveConnect>> | undefined;
  try {
    admin =
      opts.adminPort === undefined
        ? undefined
        : await serveConnect({
            routes: (router) => {
              for (const { parts } of started) parts.adminRoutes?.(router);
            },
            interceptors: [errorInterceptor(logger), adminSecretInterceptor(opts.adminSecret)],
            port: opts.adminPort,
            host: opts.adminHost ?? "127.0.0.1",
          });
  } catch (err) {
    // A taken ADMIN_PORT: close what runs, so the caller can report it and exit cleanly.
    await closeParts();
    throw err;
  }

  return {
    app,
    bus,
    admin,
    seeded,
    sandboxKeys: () => sandboxKeys(platformDbs.identity, opts.sandboxSeed),
    dbs: platformDbs,
    drainOutbox: async () => {
      let published = 0;
      for (const relay of relays) published += await relay.drain();
      return published;
    },
    async close() {
      await admin?.close();
      await closeParts();
    },
  };
}

/** The request-logs service's sink for the gateway, when it runs. */
function requestLogSinkOf(started: { parts: EmbeddedParts }[]): { requestLogSink?: RequestLogSink } {
  const sink = started.find((s) => s.parts.requestLogSink)?.parts.requestLogSink;
  return sink ? { requestLogSink: sink } : {};
}
