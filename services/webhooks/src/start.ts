import { type RunningService, type ServiceOverrides, startService } from "@platform/kit/service-runtime";
import { type WebhooksConfig, webhookSecretBox } from "./config.js";
import type { Resolver } from "./domain/endpoint.js";
import { seedWebhooksSandbox } from "./sandbox.js";
import { build, sealStoredSecrets, WEBHOOKS_SCHEMA, warnIfPrivateTargets, webhooksMigrations } from "./server.js";

export interface StartOverrides extends ServiceOverrides {
  /** Host name resolution for endpoint validation (tests). */
  resolve?: Resolver;
}

/**
 * Runs the webhooks API: migrates, seeds the sandbox and serves the gateway API on PORT.
 * Deliveries are the delivery worker's process (delivery-start.ts). Resolves to undefined
 * when MIGRATE_ONLY is set.
 */
export function start(config: WebhooksConfig, overrides: StartOverrides = {}): Promise<RunningService | undefined> {
  return startService(
    {
      name: "webhooks",
      schema: WEBHOOKS_SCHEMA,
      migrations: webhooksMigrations,
      seed: (db, clock, seed) => seedWebhooksSandbox(db, clock, seed, webhookSecretBox(config)),
      async wire(deps) {
        const { db, logger } = deps;
        warnIfPrivateTargets(logger, config.WEBHOOKS_ALLOW_PRIVATE_TARGETS);
        const secrets = webhookSecretBox(config);
        // Secrets stored before sealing (migration 004), the seeded one, or sealed under a retired key.
        const sealed = await sealStoredSecrets(db, secrets);
        if (sealed.subscriptions + sealed.idempotencyRecords > 0) {
          logger.info({ ...sealed, keyId: secrets.keyId }, "webhook secrets sealed under the current key");
        }
        const { routes } = build({
          ...deps,
          secrets,
          allowPrivateTargets: config.WEBHOOKS_ALLOW_PRIVATE_TARGETS,
          ...(overrides.resolve ? { resolve: overrides.resolve } : {}),
        });
        return { routes };
      },
    },
    config,
    overrides,
  );
}
