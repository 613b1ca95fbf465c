import { type ConfigOf, commonConfig, parse, serviceConfig } from "@platform/kit/config";
import { parseSecretKey, type SecretBox, secretBox } from "@platform/kit/secret-box";
import { configLoader, serviceDatabaseUrl } from "@platform/kit/service-config";
import { DELIVERY_TIMEOUT_MS, FAILING_DISABLE_AFTER_MS } from "./domain/retry.js";

/** The development key of WEBHOOK_SECRET_KEY: public, so PLATFORM_ENV=production refuses it. */
export const DEVELOPMENT_WEBHOOK_SECRET_KEY = "dev:ZGV2LXdlYmhvb2stc2VjcmV0LWtleS0zMi1ieXRlcyE=";

const secretKey = (raw: string) => {
  parseSecretKey(raw);
  return raw;
};

/** Settings of the webhook delivery, shared by the delivery process and the embedded runtime. */
export const deliveryConfigSpec = {
  WEBHOOK_SECRET_KEY: {
    description:
      "Key that seals the webhook signing secrets at rest (AES-256-GCM): <key id>:<base64 of 32 bytes>, e.g. k1:$(openssl rand -base64 32); shared by the API and the delivery worker. See docs/webhooks.md for rotation",
    default: DEVELOPMENT_WEBHOOK_SECRET_KEY,
    sensitive: true,
    parse: secretKey,
  },
  WEBHOOK_SECRET_KEYS_RETIRED: {
    description:
      "Comma-separated earlier WEBHOOK_SECRET_KEY values, still able to open what they sealed while a rotation re-seals it",
    default: undefined,
    sensitive: true,
    parse: (raw: string): string[] | undefined => parse.list(raw).map(secretKey),
  },
  WEBHOOKS_ALLOW_PRIVATE_TARGETS: {
    description:
      "Local development and tests only: allow endpoints on localhost, loopback and private addresses (and plain http). Logs a warning at start",
    default: false,
    parse: parse.bool,
  },
  WEBHOOKS_CA_FILE: {
    description: "PEM file of extra CAs the delivery trusts besides the public roots (e.g. a test receiver's own CA)",
    default: "",
    parse: parse.string,
  },
  WEBHOOKS_TIMEOUT_MS: {
    description: "How long an endpoint has to answer; a 2xx within it is a success",
    default: DELIVERY_TIMEOUT_MS,
    parse: parse.int(100, 60_000),
  },
  WEBHOOKS_LEASE_MS: {
    description: "How long a worker's claim on an attempt lasts; a crashed worker's attempts are taken over after it",
    default: 30_000,
    parse: parse.int(1_000, 600_000),
  },
  WEBHOOKS_CONCURRENCY: {
    description: "Attempts in flight at once per delivery worker",
    default: 32,
    parse: parse.int(1, 1000),
  },
  WEBHOOKS_PER_ENDPOINT_CONCURRENCY: {
    description:
      "Attempts to one endpoint (scheme, host and port, whichever subscriptions point at it) in flight at once, across workers",
    default: 4,
    parse: parse.int(1, 100),
  },
  WEBHOOKS_CONSUMER_GROUP: {
    description: "Kafka consumer group of the fan-out (every delivery worker of a deployment shares it)",
    default: "webhooks-delivery",
    parse: parse.string,
  },
  WEBHOOK_DISABLE_AFTER_MS: {
    description:
      "How long a subscription's deliveries fail continuously before it is disabled (disabledReason failing) and webhooks.subscription.disabled is sent; default 5 days",
    default: FAILING_DISABLE_AFTER_MS,
    parse: parse.int(1_000, 365 * 24 * 3_600_000),
  },
  WEBHOOKS_POLL_MS: {
    description: "Pause between polls for due attempts when idle",
    default: 500,
    parse: parse.int(10, 60_000),
  },
};

export const webhooksConfigSpec = {
  ...commonConfig,
  ...serviceConfig,
  ...deliveryConfigSpec,
  DATABASE_URL: serviceDatabaseUrl("webhooks", "webhooks", ", shared by the API and the delivery worker"),
  PORT: { description: "Port of the Connect-RPC API the gateway calls", default: 7106, parse: parse.port },
  DELIVERY_PORT: {
    description: "Port the delivery worker process listens on (health: accepting connections means it runs)",
    default: 7116,
    parse: parse.port,
  },
};

export type WebhooksConfig = ConfigOf<typeof webhooksConfigSpec>;
export type DeliveryConfig = ConfigOf<typeof deliveryConfigSpec>;

export const loadWebhooksConfig = configLoader(webhooksConfigSpec);

export const loadDeliveryConfig = configLoader(deliveryConfigSpec);

/** The box sealing and opening webhook signing secrets, from WEBHOOK_SECRET_KEY and the retired keys. */
export function webhookSecretBox(
  config: Pick<DeliveryConfig, "WEBHOOK_SECRET_KEY" | "WEBHOOK_SECRET_KEYS_RETIRED">,
): SecretBox {
  return secretBox(config.WEBHOOK_SECRET_KEY, config.WEBHOOK_SECRET_KEYS_RETIRED ?? []);
}

/** The development box, for tests and callers that configure none. */
export const developmentSecretBox = (): SecretBox => secretBox(DEVELOPMENT_WEBHOOK_SECRET_KEY);
