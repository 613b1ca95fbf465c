import { observeEventLoopDelay } from "@platform/kit/event-loop";
import { type RunningService, type ServiceOverrides, startService } from "@platform/kit/service-runtime";
import { logNotifier, type Notifier } from "./application/notifier.js";
import type { CalendarProvider, ConferencingProvider } from "./application/providers.js";
import { signingPool } from "./application/signing-pool.js";
import type { SchedulingConfig } from "./config.js";
import { startSchedulingConsumers } from "./events/subscriptions.js";
import { seedSchedulingSandbox } from "./sandbox.js";
import { build, SCHEDULING_SCHEMA, schedulingMigrations } from "./server.js";

export type RunningScheduling = RunningService;

export interface StartOverrides extends ServiceOverrides {
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
 * MIGRATE_ONLY is set. Exports the event loop's longest delay (availability is long CPU work).
 */
export async function start(
  config: SchedulingConfig,
  overrides: StartOverrides = {},
): Promise<RunningScheduling | undefined> {
  const stopMonitor = observeEventLoopDelay();
  const pool = config.SIGNING_THREADS > 0 ? signingPool(config.SIGNING_THREADS) : undefined;
  const stopAll = async () => {
    stopMonitor();
    await pool?.close();
  };
  const running = await startService(
    {
      name: "scheduling",
      schema: SCHEDULING_SCHEMA,
      migrations: schedulingMigrations,
      seed: (db, clock, seed) => seedSchedulingSandbox(db, clock, seed, config.BOOKING_BASE_URL),
      async wire(deps) {
        const { routes } = build({
          ...deps,
          slotTokenSecret: config.SLOT_TOKEN_SECRET,
          bookingBaseUrl: config.BOOKING_BASE_URL,
          ...(pool ? { signingPool: pool } : {}),
          ...(overrides.calendar ? { calendar: overrides.calendar } : {}),
          ...(overrides.conferencing ? { conferencing: overrides.conferencing } : {}),
        });
        const notifier = overrides.notifier ?? logNotifier(deps.logger);
        return { routes, consumers: await startSchedulingConsumers({ ...deps, notifier }) };
      },
    },
    config,
    overrides,
  ).catch(async (err: unknown) => {
    await stopAll();
    throw err;
  });
  if (!running) {
    await stopAll();
    return undefined;
  }
  return {
    ...running,
    stop: async () => {
      await running.stop();
      await stopAll();
    },
  };
}
