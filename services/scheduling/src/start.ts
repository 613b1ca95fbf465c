import type { EventBus, Subscription } from "@platform/kit/bus";
import { type Clock, systemClock } from "@platform/kit/clock";
import { errorInterceptor, type RunningServer, serveConnect, trustInterceptor } from "@platform/kit/connect";
import { type Db, ensureDatabase, openPg } from "@platform/kit/db";
import { InProcessBus } from "@platform/kit/in-process-bus";
import { KafkaBus } from "@platform/kit/kafka-bus";
import { createLogger, type Logger } from "@platform/kit/logger";
import { kitMigrations, migrate } from "@platform/kit/migrate";
import { startOutboxRelay } from "@platform/kit/outbox-relay";
import type { SchedulingConfig } from "./config.js";
import { startSchedulingConsumers } from "./events/subscriptions.js";
import { logNotifier, type Notifier } from "./notifier.js";
import type { CalendarProvider, ConferencingProvider } from "./providers.js";
import { seedSchedulingSandbox } from "./sandbox.js";
import { build, SCHEDULING_SCHEMA, schedulingMigrations } from "./server.js";

export interface RunningScheduling {
  /** Port of the Connect-RPC API (useful when configured as 0). */
  port: number;
  /** Stops accepting calls and consuming events, drains the relay and closes the bus and the database. */
  stop(): Promise<void>;
}

export interface StartOverrides {
  /** A database to use instead of DATABASE_URL (in-process tests over PGlite); the caller closes it. */
  db?: Db;
  clock?: Clock;
  logger?: Logger;
  /** The email and SMS provider; the simulated one (a log line per message) by default. */
  notifier?: Notifier;
  /** The hosts' calendar provider; the simulated one by default. */
  calendar?: CalendarProvider;
  /** The video conferencing provider; the simulated one by default. */
  conferencing?: ConferencingProvider;
}

/**
 * Runs the scheduling service: migrates, seeds the sandbox, starts the outbox relay and the
 * notification consumer and serves the gateway API on PORT. Resolves to undefined when
 * MIGRATE_ONLY is set (nothing left running).
 */
export async function start(
  config: SchedulingConfig,
  overrides: StartOverrides = {},
): Promise<RunningScheduling | undefined> {
  const logger = overrides.logger ?? createLogger("scheduling", config.LOG_LEVEL);
  const clock = overrides.clock ?? systemClock;
  let db = overrides.db;
  if (!db) {
    await ensureDatabase(config.DATABASE_URL, logger);
    db = openPg({ url: config.DATABASE_URL, schema: SCHEDULING_SCHEMA });
  }
  const ownsDb = !overrides.db;
  const database = db;
  const closeDb = async () => {
    if (ownsDb) await database.close();
  };

  try {
    const applied = await migrate(database, [kitMigrations, schedulingMigrations]);
    if (applied.length > 0) logger.info({ applied }, "migrations applied");
    if (config.MIGRATE_ONLY) {
      await closeDb();
      return undefined;
    }
    if (config.SANDBOX_ENABLED && (await seedSchedulingSandbox(database, clock, config.SANDBOX_SEED))) {
      logger.info({ seed: config.SANDBOX_SEED }, "sandbox seeded");
    }
  } catch (err) {
    await closeDb();
    throw err;
  }

  const bus: EventBus =
    config.KAFKA_BROKERS.length > 0
      ? new KafkaBus({ brokers: config.KAFKA_BROKERS, clientId: "scheduling", logger })
      : new InProcessBus({ logger });
  const relay = startOutboxRelay({ db: database, bus, logger });
  const { routes } = build({
    db: database,
    clock,
    logger,
    cursorSecret: config.PLATFORM_CURSOR_SECRET,
    slotTokenSecret: config.SLOT_TOKEN_SECRET,
    bookingBaseUrl: config.BOOKING_BASE_URL,
    ...(overrides.calendar ? { calendar: overrides.calendar } : {}),
    ...(overrides.conferencing ? { conferencing: overrides.conferencing } : {}),
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
      ...(await startSchedulingConsumers({
        db: database,
        bus,
        logger,
        notifier: overrides.notifier ?? logNotifier(logger),
      })),
    );
    const rpc = await serveConnect({
      routes,
      interceptors: [errorInterceptor(logger), trustInterceptor(config.PLATFORM_CONTEXT_SECRET, clock)],
      port: config.PORT,
    });
    servers.push(rpc);
    logger.info(
      { port: rpc.port, bus: config.KAFKA_BROKERS.length > 0 ? "kafka" : "in-process" },
      `scheduling listening: RPC on :${rpc.port}`,
    );
    return { port: rpc.port, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
