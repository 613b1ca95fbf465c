import { adminPlane, type RunningService, type ServiceOverrides, startService } from "@platform/kit/service-runtime";
import type { CrmConfig } from "./config.js";
import { startCrmConsumers } from "./events/subscriptions.js";
import { seedCrmSandbox } from "./sandbox.js";
import { build, CRM_SCHEMA, crmMigrations } from "./server.js";

export type RunningCrm = RunningService & { adminPort: number };

/**
 * Runs the crm-data service: migrates, seeds the sandbox, starts the timeline projection
 * (scheduling and email events), serves the gateway API on PORT and the ingestion plane on
 * ADMIN_PORT. Resolves to undefined when MIGRATE_ONLY is set.
 */
export async function start(config: CrmConfig, overrides: ServiceOverrides = {}): Promise<RunningCrm | undefined> {
  const running = await startService(
    {
      name: "crm-data",
      schema: CRM_SCHEMA,
      migrations: crmMigrations,
      seed: (db, clock, seed) => seedCrmSandbox(db, clock, seed),
      async wire(deps) {
        const { routes, adminRoutes } = build(deps);
        return {
          routes,
          consumers: await startCrmConsumers(deps),
          admin: adminPlane(config, adminRoutes),
        };
      },
    },
    config,
    overrides,
  );
  return running && { ...running, adminPort: running.adminPort ?? config.ADMIN_PORT };
}
