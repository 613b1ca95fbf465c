import {
  build,
  crmReferences,
  identityDirectory,
  REVENUE_SCHEMA,
  revenueMigrations,
  seedRevenueSandbox,
  startRevenueConsumers,
} from "@platform/revenue/server";
import type { EmbeddedService } from "../embedded-service.js";

/**
 * The revenue context in the embedded runtime: its own schema, the meeting projection on the
 * in-process bus, crm-data and identity reached through their in-process transports (crm
 * starts before revenue), and its read-only deal schema admin plane on the shared admin port.
 */
export const revenueEmbedded: EmbeddedService = {
  name: "revenue",
  schema: REVENUE_SCHEMA,
  migrations: revenueMigrations,
  async start(ctx) {
    // No setting of its own applies here: secrets, seed, bus and the other services' transports are the runtime's.
    const { crm, identity } = ctx.transports;
    if (!crm || !identity) throw new Error("revenue needs the crm and identity transports, started before it");
    const { routes, adminRoutes } = build({
      ...ctx,
      crm: crmReferences(crm, ctx.contextSecret, ctx.clock),
      directory: identityDirectory(identity, ctx.contextSecret, ctx.clock),
    });
    return {
      routes,
      adminRoutes,
      consumers: await startRevenueConsumers(ctx),
      seed: () => seedRevenueSandbox(ctx.db, ctx.clock, ctx.sandboxSeed),
    };
  },
};
