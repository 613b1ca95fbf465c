import type { EventBus, Subscription } from "@platform/kit/bus";
import { type Clock, systemClock } from "@platform/kit/clock";
import {
  adminSecretInterceptor,
  errorInterceptor,
  type RunningServer,
  serveConnect,
  trustInterceptor,
} from "@platform/kit/connect";
import { type Db, ensureDatabase, openPg } from "@platform/kit/db";
import { InProcessBus } from "@platform/kit/in-process-bus";
import { KafkaBus } from "@platform/kit/kafka-bus";
import { createLogger, type Logger } from "@platform/kit/logger";
import { kitMigrations, migrate } from "@platform/kit/migrate";
import { startOutboxRelay } from "@platform/kit/outbox-relay";
import type { IdentityConfig } from "./config.js";
import { startIdentityConsumers } from "./events/subscriptions.js";
import { type InvitationMailer, logMailer } from "./mailer.js";
import { seedSandbox } from "./sandbox.js";
import { build, IDENTITY_SCHEMA, identityMigrations } from "./server.js";

export interface RunningIdentity {
  /** Port of the Connect-RPC API (useful when configured as 0). */
  port: number;
  adminPort: number;
  /** Stops accepting calls and consuming events, drains the relay and closes the bus and the database. */
  stop(): Promise<void>;
}

export interface StartOverrides {
  /** A database to use instead of DATABASE_URL (in-process tests over PGlite); the caller closes it. */
  db?: Db;
  clock?: Clock;
  logger?: Logger;
  /** The invitation email provider; the simulated one (a log line per invitation) by default. */
  mailer?: InvitationMailer;
}

/**
 * Runs the identity service: migrates, seeds the sandbox, starts the outbox relay and the
 * event consumers (delegation audit, invitation emails) and serves the gateway API on PORT
 * and the admin plane on ADMIN_PORT. Resolves to undefined when MIGRATE_ONLY is set
 * (nothing left running).
 */
export async function start(
  config: IdentityConfig,
  overrides: StartOverrides = {},
): Promise<RunningIdentity | undefined> {
  const logger = overrides.logger ?? createLogger("identity", config.LOG_LEVEL);
  const clock = overrides.clock ?? systemClock;
  let db = overrides.db;
  if (!db) {
    await ensureDatabase(config.DATABASE_URL, logger);
    db = openPg({ url: config.DATABASE_URL, schema: IDENTITY_SCHEMA });
  }
  const ownsDb = !overrides.db;
  const database = db;
  const closeDb = async () => {
    if (ownsDb) await database.close();
  };

  try {
    const applied = await migrate(database, [kitMigrations, identityMigrations]);
    if (applied.length > 0) logger.info({ applied }, "migrations applied");
    if (config.MIGRATE_ONLY) {
      await closeDb();
      return undefined;
    }
    if (config.SANDBOX_ENABLED && (await seedSandbox(database, clock, config.SANDBOX_SEED))) {
      logger.info({ seed: config.SANDBOX_SEED }, "sandbox seeded");
    }
  } catch (err) {
    await closeDb();
    throw err;
  }

  const bus: EventBus =
    config.KAFKA_BROKERS.length > 0
      ? new KafkaBus({ brokers: config.KAFKA_BROKERS, clientId: "identity", logger })
      : new InProcessBus({ logger });
  const relay = startOutboxRelay({ db: database, bus, logger });
  const { routes, adminRoutes } = build({
    db: database,
    clock,
    logger,
    sandboxSeed: config.SANDBOX_SEED,
    cursorSecret: config.PLATFORM_CURSOR_SECRET,
    onCommit: () => relay.notify(),
  });

  const servers: RunningServer[] = [];
  const consumers: Subscription[] = [];
  const stop = async () => {
    await Promise.all(servers.map((s) => s.close()));
    await Promise.all(consumers.map((c) => c.close()));
    await relay.stop();
    await bus.close();
    await closeDb();
  };
  try {
    consumers.push(
      ...(await startIdentityConsumers({
        db: database,
        bus,
        logger,
        mailer: overrides.mailer ?? logMailer(logger),
      })),
    );
    const rpc = await serveConnect({
      routes,
      interceptors: [errorInterceptor(logger), trustInterceptor(config.PLATFORM_CONTEXT_SECRET, clock)],
      port: config.PORT,
    });
    servers.push(rpc);
    const admin = await serveConnect({
      routes: adminRoutes,
      interceptors: [errorInterceptor(logger), adminSecretInterceptor(config.PLATFORM_ADMIN_SECRET)],
      port: config.ADMIN_PORT,
    });
    servers.push(admin);
    logger.info(
      { port: rpc.port, adminPort: admin.port, bus: config.KAFKA_BROKERS.length > 0 ? "kafka" : "in-process" },
      `identity listening: RPC on :${rpc.port}, admin plane on :${admin.port}`,
    );
    return { port: rpc.port, adminPort: admin.port, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
