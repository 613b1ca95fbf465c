import {
  analyticsMigrations,
  build,
  crmContacts,
  seedAnalyticsSandbox,
  startAnalyticsConsumers,
} from "@platform/analytics/server";
import type { EmbeddedService } from "../embedded-service.js";

/**
 * The analytics context in the embedded runtime: its routes, its admin plane (on the one
 * admin port), the email-event consumer on the in-process bus, and contact resolution
 * through crm-data's in-process transport (Unimplemented until crm-data runs: contactId null).
 */
export const analyticsEmbedded: EmbeddedService = {
  name: "analytics",
  schema: "analytics",
  migrations: analyticsMigrations,
  async start(ctx) {
    // No setting of its own applies here: secrets, seed, ports, bus and crm-data's address are the runtime's.
    const contacts = ctx.transports.crm
      ? crmContacts({
          transport: ctx.transports.crm,
          contextSecret: ctx.contextSecret,
          clock: ctx.clock,
          logger: ctx.logger,
        })
      : undefined;
    const { routes, adminRoutes } = build({
      ...ctx,
      ...(contacts ? { contacts } : {}),
    });
    return {
      routes,
      adminRoutes,
      consumers: await startAnalyticsConsumers(ctx),
      seed: () => seedAnalyticsSandbox(ctx.db, ctx.clock, ctx.sandboxSeed),
    };
  },
};
