import { build, CRM_SCHEMA, crmMigrations, seedCrmSandbox, startCrmConsumers } from "@platform/crm-data/server";
import type { EmbeddedService } from "../embedded-service.js";

/**
 * The crm-data context in the embedded runtime: its API, its ingestion plane on the shared
 * admin port, the timeline projection on the in-process bus, and its sandbox.
 */
export const crmEmbedded: EmbeddedService = {
  name: "crm",
  schema: CRM_SCHEMA,
  migrations: crmMigrations,
  async start(ctx) {
    // No setting of its own applies here: secrets, seed, ports and bus are the runtime's (ctx).
    const { routes, adminRoutes } = build(ctx);
    return {
      routes,
      adminRoutes,
      consumers: await startCrmConsumers(ctx),
      seed: () => seedCrmSandbox(ctx.db, ctx.clock, ctx.sandboxSeed),
    };
  },
};
