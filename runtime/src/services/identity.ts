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
    const { routes, adminRoutes } = build({
      db: ctx.db,
      clock: ctx.clock,
      logger: ctx.logger,
      sandboxSeed: ctx.sandboxSeed,
      cursorSecret: ctx.cursorSecret,
      onCommit: ctx.onCommit,
    });
    return {
      routes,
      adminRoutes,
      consumers: await startIdentityConsumers({
        db: ctx.db,
        bus: ctx.bus,
        logger: ctx.logger,
        mailer: logMailer(ctx.logger),
      }),
      seed: () => seedSandbox(ctx.db, ctx.clock, ctx.sandboxSeed),
    };
  },
};
