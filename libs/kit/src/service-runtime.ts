import type { Interceptor } from "@connectrpc/connect";
import type { EventBus, Subscription } from "./bus.js";
import { type Clock, systemClock } from "./clock.js";
import { commonConfig, loadConfig } from "./config.js";
import {
  adminSecretInterceptor,
  errorInterceptor,
  type Routes,
  type RunningServer,
  serveConnect,
  trustInterceptor,
} from "./connect.js";
import { type Db, ensureDatabase, openPg } from "./db.js";
import { healthRoutes } from "./health.js";
import { InProcessBus } from "./in-process-bus.js";
import { KafkaBus } from "./kafka-bus.js";
import { createLogger, type Logger } from "./logger.js";
import { kitMigrations, type MigrationSource, migrate } from "./migrate.js";
import { startOutboxRelay } from "./outbox-relay.js";
import { exitOnSignals, ignoreBrokenPipes } from "./shutdown.js";
import { stopTelemetry } from "./telemetry.js";

/** The settings every service process has (see each service's config.ts). */
export interface ServiceConfig {
  DATABASE_URL: string;
  PORT: number;
  LOG_LEVEL: string;
  PLATFORM_CONTEXT_SECRET: string;
  PLATFORM_CURSOR_SECRET: string;
  KAFKA_BROKERS: string[];
  KAFKA_GROUP_INSTANCE_ID?: string;
  SANDBOX_ENABLED: boolean;
  SANDBOX_SEED: string;
  MIGRATE_ONLY: boolean;
}

/** What every service's `build()` is given, in its process (start.ts) and in the embedded runtime. */
export interface ServiceDeps {
  db: Db;
  clock: Clock;
  /** PLATFORM_CURSOR_SECRET: the service mints the cursors the gateway verifies. */
  cursorSecret: string;
}

/** What a service builds once its database, bus and outbox relay exist. */
export interface ServiceParts {
  /** The API the gateway calls, behind the signed request context. */
  routes: Routes;
  /** Its event consumers, stopped before the bus closes. */
  consumers?: Subscription[];
  /** An admin plane on its own port, behind a bearer secret. */
  admin?: { routes: Routes; port: number; secret: string };
}

export interface WireContext extends ServiceDeps {
  bus: EventBus;
  logger: Logger;
}

/** The admin plane of a service whose config has adminPlaneConfig and an ADMIN_PORT. */
export function adminPlane(
  config: { ADMIN_PORT: number; PLATFORM_ADMIN_SECRET: string },
  routes: Routes,
): NonNullable<ServiceParts["admin"]> {
  return { routes, port: config.ADMIN_PORT, secret: config.PLATFORM_ADMIN_SECRET };
}

export interface ServiceDefinition {
  /** Log and telemetry name, e.g. "identity". */
  name: string;
  /** The service's own schema. */
  schema: string;
  /** Its migrations (the kit's tables are added in front). */
  migrations: MigrationSource;
  /** Seeds the sandbox when missing; true when it wrote data. */
  seed?: (db: Db, clock: Clock, seed: string) => Promise<boolean>;
  /** Builds the service from what the runtime made: its build() deps, the bus and the relay's nudge. */
  wire(ctx: WireContext): Promise<ServiceParts>;
}

export interface ServiceOverrides {
  /** A database to use instead of DATABASE_URL (in-process tests over PGlite); the caller closes it. */
  db?: Db;
  clock?: Clock;
  logger?: Logger;
}

export interface RunningService {
  /** Port of the Connect-RPC API (useful when configured as 0). */
  port: number;
  /** Port of the admin plane, when the service has one. */
  adminPort?: number;
  /** Stops accepting calls and consuming events, drains the relay and closes the bus and the database. */
  stop(): Promise<void>;
}

/**
 * Runs a service process: creates its database when missing, migrates (and stops there with
 * MIGRATE_ONLY), seeds the sandbox, starts the outbox relay to Kafka (or an in-process bus),
 * its consumers and its Connect servers. Resolves to undefined with MIGRATE_ONLY.
 */
export async function startService(
  def: ServiceDefinition,
  config: ServiceConfig,
  overrides: ServiceOverrides = {},
): Promise<RunningService | undefined> {
  const logger = overrides.logger ?? createLogger(def.name, config.LOG_LEVEL);
  const clock = overrides.clock ?? systemClock;
  let owned: Db | undefined;
  if (!overrides.db) {
    await ensureDatabase(config.DATABASE_URL, logger);
    owned = openPg({ url: config.DATABASE_URL, schema: def.schema, logger });
  }
  const db = (overrides.db ?? owned) as Db;
  const closeDb = async () => {
    await owned?.close();
  };

  try {
    const applied = await migrate(db, [kitMigrations, def.migrations]);
    if (applied.length > 0) logger.info({ applied }, "migrations applied");
    if (config.MIGRATE_ONLY) {
      await closeDb();
      return undefined;
    }
    if (config.SANDBOX_ENABLED && def.seed && (await def.seed(db, clock, config.SANDBOX_SEED))) {
      logger.info({ seed: config.SANDBOX_SEED }, "sandbox seeded");
    }
  } catch (err) {
    await closeDb();
    throw err;
  }

  const kafka = config.KAFKA_BROKERS.length > 0;
  const bus: EventBus = kafka
    ? new KafkaBus({
        brokers: config.KAFKA_BROKERS,
        clientId: def.name,
        logger,
        groupInstanceId: config.KAFKA_GROUP_INSTANCE_ID,
      })
    : new InProcessBus({ logger });
  const relay = startOutboxRelay({ db, bus, logger, clock });
  const servers: RunningServer[] = [];
  const consumers: Subscription[] = [];
  let draining = false;
  const stop = async () => {
    // Health turns NOT_SERVING first, so probes take the pod out of rotation while it drains.
    draining = true;
    await Promise.all(servers.map((s) => s.close()));
    await Promise.all(consumers.map((c) => c.close()));
    await relay.stop();
    await bus.close();
    await closeDb();
  };
  try {
    const parts = await def.wire({
      db,
      bus,
      clock,
      logger,
      cursorSecret: config.PLATFORM_CURSOR_SECRET,
    });
    consumers.push(...(parts.consumers ?? []));
    const serve = async (routes: Routes, interceptors: Interceptor[], port: number) => {
      const server = await serveConnect({ routes, interceptors: [errorInterceptor(logger), ...interceptors], port });
      servers.push(server);
      return server.port;
    };
    const health = healthRoutes({
      name: def.name,
      serving: async () => !draining && (await db.query("SELECT 1")).length === 1,
    });
    const routes: Routes = (router) => {
      parts.routes(router);
      health(router);
    };
    const port = await serve(routes, [trustInterceptor(config.PLATFORM_CONTEXT_SECRET, clock)], config.PORT);
    const adminPort = parts.admin
      ? await serve(parts.admin.routes, [adminSecretInterceptor(parts.admin.secret)], parts.admin.port)
      : undefined;
    logger.info(
      { port, adminPort, bus: kafka ? "kafka" : "in-process" },
      `${def.name} listening: RPC on :${port}${adminPort === undefined ? "" : `, admin plane on :${adminPort}`}`,
    );
    return { port, ...(adminPort === undefined ? {} : { adminPort }), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * The body of a service's main.ts (after it started telemetry): runs the service until
 * SIGTERM or SIGINT, then stops it in order and flushes telemetry, within SHUTDOWN_TIMEOUT_MS
 * whatever it waits for; exits 1 when it cannot start.
 */
export async function runUntilSignal(name: string, start: () => Promise<RunningService | undefined>): Promise<void> {
  ignoreBrokenPipes();
  try {
    const { SHUTDOWN_TIMEOUT_MS } = loadConfig({ SHUTDOWN_TIMEOUT_MS: commonConfig.SHUTDOWN_TIMEOUT_MS });
    const running = await start();
    if (!running) {
      await stopTelemetry();
      process.exit(0);
    }
    exitOnSignals({
      name,
      drainTimeoutMs: SHUTDOWN_TIMEOUT_MS,
      stop: async () => {
        await running.stop();
        await stopTelemetry();
      },
    });
  } catch (err) {
    process.stderr.write(`${name}: failed to start: ${(err as Error).message}\n`);
    process.exit(1);
  }
}
