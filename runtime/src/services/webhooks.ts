import { loadConfig } from "@platform/kit/config";
import { deliveryConfigSpec, webhookSecretBox } from "@platform/webhooks/config";
import {
  build,
  sealStoredSecrets,
  seedWebhooksSandbox,
  startDelivery,
  WEBHOOKS_SCHEMA,
  webhooksMigrations,
} from "@platform/webhooks/server";
import type { EmbeddedService } from "../embedded-service.js";

/**
 * The webhooks context in the embedded runtime: the API, and the delivery worker in process
 * on the in-process bus (in the distributed runtime the worker is its own process). Settings
 * (WEBHOOKS_ALLOW_PRIVATE_TARGETS, WEBHOOKS_CA_FILE, timeouts) come from the runtime's env.
 */
export const webhooksEmbedded: EmbeddedService = {
  name: "webhooks",
  schema: WEBHOOKS_SCHEMA,
  migrations: webhooksMigrations,
  async start(ctx) {
    const config = loadConfig(deliveryConfigSpec, ctx.env);
    const secrets = webhookSecretBox(config);
    await sealStoredSecrets(ctx.db, secrets);
    const delivery = await startDelivery({ db: ctx.db, bus: ctx.bus, clock: ctx.clock, logger: ctx.logger, config });
    const { routes } = build({
      db: ctx.db,
      clock: ctx.clock,
      cursorSecret: ctx.cursorSecret,
      secrets,
      allowPrivateTargets: config.WEBHOOKS_ALLOW_PRIVATE_TARGETS,
      queued: () => delivery.worker.nudge(),
    });
    return {
      routes,
      consumers: delivery.subscriptions,
      seed: () => seedWebhooksSandbox(ctx.db, ctx.clock, ctx.sandboxSeed, secrets),
    };
  },
};
