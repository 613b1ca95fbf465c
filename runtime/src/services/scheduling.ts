import {
  build,
  logNotifier,
  SCHEDULING_SCHEMA,
  schedulingMigrations,
  seedSchedulingSandbox,
  startSchedulingConsumers,
} from "@platform/scheduling/server";
import type { EmbeddedService } from "../embedded-service.js";

export interface SchedulingEmbeddedOptions {
  /** HMAC secret of slot tokens; a development default when unset. */
  slotTokenSecret?: string;
  /** Base of the reschedule and cancel links in meetings. */
  bookingBaseUrl?: string;
}

/**
 * The scheduling context in the embedded runtime: Smart Schedules, availability and meetings,
 * notices written to the log, and its sandbox schedules.
 */
export function schedulingEmbedded(opts: SchedulingEmbeddedOptions): EmbeddedService {
  return {
    name: "scheduling",
    schema: SCHEDULING_SCHEMA,
    migrations: schedulingMigrations,
    async start(ctx) {
      const { routes } = build({
        ...ctx,
        slotTokenSecret: opts.slotTokenSecret ?? "dev-slot-token-secret-change-me",
        bookingBaseUrl: opts.bookingBaseUrl ?? "https://book.platform.example",
      });
      return {
        routes,
        consumers: await startSchedulingConsumers({ ...ctx, notifier: logNotifier(ctx.logger) }),
        seed: () => seedSchedulingSandbox(ctx.db, ctx.clock, ctx.sandboxSeed, opts.bookingBaseUrl),
      };
    },
  };
}
