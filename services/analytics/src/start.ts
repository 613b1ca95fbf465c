import { httpTransport } from "@platform/kit/connect";
import { type RunningService, type ServiceOverrides, startService } from "@platform/kit/service-runtime";
import { crmContacts } from "./application/contacts.js";
import type { AnalyticsConfig } from "./config.js";
import { startAnalyticsConsumers } from "./events/subscriptions.js";
import { seedAnalyticsSandbox } from "./sandbox.js";
import { ANALYTICS_SCHEMA, analyticsMigrations, build } from "./server.js";

export type RunningAnalytics = RunningService & { adminPort: number };

/**
 * Runs the analytics service: migrates, seeds the sandbox, consumes email events from the
 * bus and serves the gateway API on PORT and the admin plane (ingestion, blast metadata) on
 * ADMIN_PORT. Resolves to undefined when MIGRATE_ONLY is set.
 */
export async function start(
  config: AnalyticsConfig,
  overrides: ServiceOverrides = {},
): Promise<RunningAnalytics | undefined> {
  const running = await startService(
    {
      name: "analytics",
      schema: ANALYTICS_SCHEMA,
      migrations: analyticsMigrations,
      seed: seedAnalyticsSandbox,
      async wire({ db, bus, clock, logger }) {
        const contacts = crmContacts({
          transport: httpTransport(config.CRM_URL, [], { timeoutMs: config.SERVICE_RPC_TIMEOUT_MS }),
          contextSecret: config.PLATFORM_CONTEXT_SECRET,
          clock,
          logger,
        });
        const { routes, adminRoutes } = build({
          db,
          clock,
          logger,
          cursorSecret: config.PLATFORM_CURSOR_SECRET,
          contacts,
        });
        return {
          routes,
          consumers: await startAnalyticsConsumers({ db, bus, logger }),
          admin: { routes: adminRoutes, port: config.ADMIN_PORT, secret: config.PLATFORM_ADMIN_SECRET },
        };
      },
    },
    config,
    overrides,
  );
  return running as RunningAnalytics | undefined;
}
