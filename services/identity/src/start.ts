import { adminPlane, type RunningService, type ServiceOverrides, startService } from "@platform/kit/service-runtime";
import { type InvitationMailer, logMailer } from "./application/mailer.js";
import type { IdentityConfig } from "./config.js";
import { startIdentityConsumers } from "./events/subscriptions.js";
import { seedSandbox } from "./sandbox.js";
import { build, IDENTITY_SCHEMA, identityMigrations } from "./server.js";

export type RunningIdentity = RunningService & { adminPort: number };

export interface StartOverrides extends ServiceOverrides {
  /** The invitation email provider; the simulated one (a log line per invitation) by default. */
  mailer?: InvitationMailer;
}

/**
 * Runs the identity service: migrates, seeds the sandbox, starts the outbox relay and the
 * event consumers (delegation audit, invitation emails) and serves the gateway API on PORT
 * and the admin plane on ADMIN_PORT. Resolves to undefined when MIGRATE_ONLY is set.
 */
export async function start(
  config: IdentityConfig,
  overrides: StartOverrides = {},
): Promise<RunningIdentity | undefined> {
  const running = await startService(
    {
      name: "identity",
      schema: IDENTITY_SCHEMA,
      migrations: identityMigrations,
      seed: seedSandbox,
      async wire(deps) {
        const { routes, adminRoutes } = build({ ...deps, sandboxSeed: config.SANDBOX_SEED });
        const mailer = overrides.mailer ?? logMailer(deps.logger);
        return {
          routes,
          consumers: await startIdentityConsumers({ ...deps, mailer }),
          admin: adminPlane(config, adminRoutes),
        };
      },
    },
    config,
    overrides,
  );
  return running as RunningIdentity | undefined;
}
