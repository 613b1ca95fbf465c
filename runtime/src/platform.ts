import { join } from "node:path";
import { buildGateway, type GatewayConfig, memoryRateLimitStore } from "@platform/gateway/app";
import {
  build as buildIdentity,
  identityMigrations,
  logMailer,
  type SandboxKeyInfo,
  sandboxKeys,
  seedSandbox,
  startIdentityConsumers,
} from "@platform/identity/server";
import { type Clock, systemClock } from "@platform/kit/clock";
import {
  adminSecretInterceptor,
  errorInterceptor,
  inProcessTransport,
  type RunningServer,
  serveConnect,
  trustInterceptor,
} from "@platform/kit/connect";
import type { Db } from "@platform/kit/db";
import { openPglite, pgliteDb } from "@platform/kit/db";
import { InProcessBus } from "@platform/kit/in-process-bus";
import type { Logger } from "@platform/kit/logger";
import { kitMigrations, migrate } from "@platform/kit/migrate";
import { startOutboxRelay } from "@platform/kit/outbox-relay";
import {
  build as buildScheduling,
  logNotifier,
  schedulingMigrations,
  seedSchedulingSandbox,
  startSchedulingConsumers,
} from "@platform/scheduling/server";
import type { FastifyInstance } from "fastify";

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
  /** Each service's database, for the benchmark's fixtures and for tests. */
  dbs: { identity: Db; scheduling: Db };
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
  const pglite = await openPglite(opts.dataDir ? join(opts.dataDir, "pglite") : undefined);
  const bus = new InProcessBus();

  const serverInterceptors = [errorInterceptor(logger), trustInterceptor(opts.gateway.PLATFORM_CONTEXT_SECRET, clock)];
  const cursorSecret = opts.gateway.PLATFORM_CURSOR_SECRET;

  const identityDb = pgliteDb(pglite, "identity");
  await migrate(identityDb, [kitMigrations, identityMigrations]);
  const identityRelay = startOutboxRelay({ db: identityDb, bus, logger });
  const identity = buildIdentity({
    db: identityDb,
    clock,
    logger,
    sandboxSeed: opts.sandboxSeed,
    cursorSecret,
    onCommit: () => identityRelay.notify(),
  });

  const schedulingDb = pgliteDb(pglite, "scheduling");
  await migrate(schedulingDb, [kitMigrations, schedulingMigrations]);
  const schedulingRelay = startOutboxRelay({ db: schedulingDb, bus, logger });
  const scheduling = buildScheduling({
    db: schedulingDb,
    clock,
    logger,
    cursorSecret,
    slotTokenSecret: opts.slotTokenSecret ?? "dev-slot-token-secret-change-me",
    bookingBaseUrl: opts.bookingBaseUrl ?? "https://book.platform.example",
    onCommit: () => schedulingRelay.notify(),
  });

  const consumers = [
    ...(await startIdentityConsumers({ db: identityDb, bus, logger, mailer: logMailer(logger) })),
    ...(await startSchedulingConsumers({ db: schedulingDb, bus, logger, notifier: logNotifier(logger) })),
  ];
  const seeded = opts.seedSandbox ? await seedSandbox(identityDb, clock, opts.sandboxSeed) : false;
  if (opts.seedSandbox) await seedSchedulingSandbox(schedulingDb, clock, opts.sandboxSeed);

  const app = await buildGateway({
    config: opts.gateway,
    clock,
    logger,
    transports: {
      identity: inProcessTransport(identity.routes, serverInterceptors),
      scheduling: inProcessTransport(scheduling.routes, serverInterceptors),
    },
    rateLimitStore: memoryRateLimitStore(),
    bus,
  });

  const admin =
    opts.adminPort === undefined
      ? undefined
      : await serveConnect({
          routes: identity.adminRoutes,
          interceptors: [errorInterceptor(logger), adminSecretInterceptor(opts.adminSecret)],
          port: opts.adminPort,
          host: opts.adminHost ?? "127.0.0.1",
        });

  return {
    app,
    bus,
    admin,
    seeded,
    sandboxKeys: () => sandboxKeys(identityDb, opts.sandboxSeed),
    dbs: { identity: identityDb, scheduling: schedulingDb },
    drainOutbox: async () => (await identityRelay.drain()) + (await schedulingRelay.drain()),
    async close() {
      await app.close();
      await admin?.close();
      for (const c of consumers) await c.close();
      await identityRelay.stop();
      await schedulingRelay.stop();
      await bus.close();
      await pglite.close();
    },
  };
}
