import {
  build,
  IDENTITY_SCHEMA,
  identityMigrations,
  logMailer,
  seedSandbox,
  startIdentityConsumers,
} from "@platform/identity/server";
import type { EmbeddedService } from "../embedded-service.js";

/**
 * The identity context in the embedded runtime: API keys, organizations, users and partners,
 * its admin plane on the shared admin port, invitations mailed to the log, and the sandbox
 * organization and keys (its seed tells the runtime whether this start created the sandbox).
 */
export const identityEmbedded: EmbeddedService = {
  name: "identity",
  schema: IDENTITY_SCHEMA,
  migrations: identityMigrations,
  async start(ctx) {
    // No setting of its own applies here: secrets, seed and bus are the runtime's (ctx).
    const { routes, adminRoutes } = build(ctx);
    return {
      routes,
      adminRoutes,
      consumers: await startIdentityConsumers({ ...ctx, mailer: logMailer(ctx.logger) }),
      seed: () => seedSandbox(ctx.db, ctx.clock, ctx.sandboxSeed),
    };
  },
};
