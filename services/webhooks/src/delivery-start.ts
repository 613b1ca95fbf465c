import { type RunningService, type ServiceOverrides, startService } from "@platform/kit/service-runtime";
import type { WebhooksConfig } from "./config.js";
import { startDelivery, WEBHOOKS_SCHEMA, webhooksMigrations } from "./server.js";

/**
 * Runs the delivery worker process: consumes the topics of the catalog's events (scheduling,
 * revenue; group webhooks-delivery) into pending attempts and sends them. It shares the API's database and answers no RPC;
 * it listens on DELIVERY_PORT so orchestrators and tests can tell it is up.
 */
export function startDeliveryProcess(
  config: WebhooksConfig,
  overrides: ServiceOverrides = {},
): Promise<RunningService | undefined> {
  return startService(
    {
      name: "webhooks-delivery",
      schema: WEBHOOKS_SCHEMA,
      migrations: webhooksMigrations,
      async wire({ db, bus, clock, logger }) {
        const { subscriptions } = await startDelivery({
          db,
          bus,
          clock,
          logger,
          config,
          workerId: config.KAFKA_GROUP_INSTANCE_ID,
        });
        return { routes: () => {}, consumers: subscriptions };
      },
    },
    // The API process seeds the sandbox; this one only delivers.
    { ...config, PORT: config.DELIVERY_PORT, SANDBOX_ENABLED: false },
    overrides,
  );
}
