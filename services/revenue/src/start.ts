import { httpTransport } from "@platform/kit/connect";
import { adminPlane, type RunningService, type ServiceOverrides, startService } from "@platform/kit/service-runtime";
import { crmReferences, identityDirectory } from "./application/references.js";
import type { RevenueConfig } from "./config.js";
import { startRevenueConsumers } from "./events/subscriptions.js";
import { seedRevenueSandbox } from "./sandbox.js";
import { build, REVENUE_SCHEMA, revenueMigrations } from "./server.js";

export type RunningRevenue = RunningService;

/**
 * Runs the revenue service: migrates, seeds the sandbox, starts the outbox relay and the
 * meeting projection, serves the gateway API on PORT and the admin plane on ADMIN_PORT.
 * Resolves to undefined when MIGRATE_ONLY is set.
 */
export function start(config: RevenueConfig, overrides: ServiceOverrides = {}): Promise<RunningRevenue | undefined> {
  return startService(
    {
      name: "revenue",
      schema: REVENUE_SCHEMA,
      migrations: revenueMigrations,
      seed: (db, clock, seed) => seedRevenueSandbox(db, clock, seed),
      async wire(deps) {
        const { clock } = deps;
        const calls = { timeoutMs: config.SERVICE_RPC_TIMEOUT_MS };
        const { routes, adminRoutes } = build({
          ...deps,
          crm: crmReferences(httpTransport(config.CRM_URL, [], calls), config.PLATFORM_CONTEXT_SECRET, clock),
          directory: identityDirectory(
            httpTransport(config.IDENTITY_URL, [], calls),
            config.PLATFORM_CONTEXT_SECRET,
            clock,
          ),
        });
        return {
          routes,
          consumers: await startRevenueConsumers(deps),
          admin: adminPlane(config, adminRoutes),
        };
      },
    },
    config,
    overrides,
  );
}
