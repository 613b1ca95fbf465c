import { httpTransport } from "@platform/kit/connect";
import { adminPlane, type RunningService, type ServiceOverrides, startService } from "@platform/kit/service-runtime";
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
      async wire(deps) {
        const contacts = crmContacts({
          transport: httpTransport(config.CRM_URL, [], { timeoutMs: config.SERVICE_RPC_TIMEOUT_MS }),
          contextSecret: config.PLATFORM_CONTEXT_SECRET,
          clock: deps.clock,
          logger: deps.logger,
        });
        const { routes, adminRoutes } = build({ ...deps, contacts });
        return {
          routes,
          consumers: await startAnalyticsConsumers(deps),
          admin: adminPlane(config, adminRoutes),
        };
      },
    },
    config,
    overrides,
  );
  return running as RunningAnalytics | undefined;
}
