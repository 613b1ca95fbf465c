import { readFileSync } from "node:fs";
import { EventLogService, WebhookSubscriptionService } from "@platform/contracts/webhooks";
import type { EventBus, Subscription } from "@platform/kit/bus";
import type { Clock } from "@platform/kit/clock";
import type { Routes } from "@platform/kit/connect";
import type { Db } from "@platform/kit/db";
import type { Logger } from "@platform/kit/logger";
import { type MigrationSource, migrationsBeside } from "@platform/kit/migrate";
import type { SecretBox } from "@platform/kit/secret-box";
import type { ServiceDeps } from "@platform/kit/service-runtime";
import { startEventLogRetention } from "./application/event-log-retention.js";
import { type DeliveryConfig, developmentSecretBox, webhookSecretBox } from "./config.js";
import { startFanOut } from "./delivery/fan-out.js";
import { httpSender, type Sender, systemResolver } from "./delivery/sender.js";
import { attemptStatistics } from "./delivery/statistics.js";
import { type DeliveryWorker, deliveryWorker } from "./delivery/worker.js";
import type { Resolver } from "./domain/endpoint.js";
import { eventLogHandlers } from "./handlers/event-log.handler.js";
import { subscriptionHandlers } from "./handlers/subscription.handler.js";

export { purgeEventLog } from "./application/event-log-retention.js";
export { DELIVERED_TOPICS, DELIVERY_GROUP } from "./delivery/fan-out.js";
export { httpSender, systemResolver } from "./delivery/sender.js";
export type { DeliveryWorker } from "./delivery/worker.js";
export { EVENT_CATALOG, TEST_EVENT_TYPE } from "./domain/catalog.js";
export { EVENT_LOG_RETENTION_DAYS, publicEventId } from "./domain/event-log.js";
export { sandboxLegacySecret, seedWebhooksSandbox } from "./sandbox.js";
export { sealStoredSecrets } from "./store/sealing.js";

/** The service's schema: every table is `webhooks.<table>`. */
export const WEBHOOKS_SCHEMA = "webhooks";

/** The service's own migrations, applied after the kit's (outbox, idempotency, processed events). */
export const webhooksMigrations: MigrationSource = migrationsBeside("webhooks", import.meta.url);

export interface WebhooksDeps extends ServiceDeps {
  /** WEBHOOKS_ALLOW_PRIVATE_TARGETS. */
  allowPrivateTargets: boolean;
  /** Host name resolution for endpoint validation; the system resolver by default. */
  resolve?: Resolver;
  /** Called after a test or redeliver queued an attempt (an in-process worker sends it at once). */
  queued?: () => void;
  /** Seals the signing secrets at rest (WEBHOOK_SECRET_KEY); the development key when omitted. */
  secrets?: SecretBox;
}

/** The webhooks API's Connect routes, served behind the trust interceptor. */
export function build(deps: WebhooksDeps): { routes: Routes } {
  const handlers = subscriptionHandlers({
    db: deps.db,
    clock: deps.clock,
    cursorSecret: deps.cursorSecret,
    endpoints: { allowPrivateTargets: deps.allowPrivateTargets, resolve: deps.resolve ?? systemResolver },
    secrets: deps.secrets ?? developmentSecretBox(),
    ...(deps.queued ? { queued: deps.queued } : {}),
  });
  const eventLog = eventLogHandlers({ db: deps.db, cursorSecret: deps.cursorSecret });
  return {
    routes: (router) => router.service(WebhookSubscriptionService, handlers).service(EventLogService, eventLog),
  };
}

export interface DeliveryDeps {
  db: Db;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
  config: DeliveryConfig;
  /** The worker's stable identity across restarts (KAFKA_GROUP_INSTANCE_ID); see WorkerOptions.workerId. */
  workerId?: string;
  /** Resolution at connect time; the system resolver by default. */
  resolve?: Resolver;
  /** Replaces the HTTP sender (tests). */
  sender?: Sender;
  random?: () => number;
}

/** Warns once per process that private targets are allowed: that setting must never reach production. */
export function warnIfPrivateTargets(logger: Logger, allow: boolean): void {
  if (allow) {
    logger.warn(
      "WEBHOOKS_ALLOW_PRIVATE_TARGETS is on: webhooks may target localhost and private networks (and plain http). Local development and tests only",
    );
  }
}

/**
 * The delivery side: the fan-out consumer of the domain topics and the worker sending due
 * attempts. Close the subscriptions (fan-out first, then the worker) before the bus.
 */
export async function startDelivery(
  deps: DeliveryDeps,
): Promise<{ worker: DeliveryWorker; subscriptions: Subscription[] }> {
  const { config } = deps;
  warnIfPrivateTargets(deps.logger, config.WEBHOOKS_ALLOW_PRIVATE_TARGETS);
  const ca = config.WEBHOOKS_CA_FILE ? [readFileSync(config.WEBHOOKS_CA_FILE, "utf8")] : undefined;
  const sender =
    deps.sender ??
    httpSender({
      allowPrivateTargets: config.WEBHOOKS_ALLOW_PRIVATE_TARGETS,
      maxSocketsPerEndpoint: config.WEBHOOKS_PER_ENDPOINT_CONCURRENCY,
      resolve: deps.resolve ?? systemResolver,
      timeoutMs: config.WEBHOOKS_TIMEOUT_MS,
      ...(ca ? { ca: [...(await import("node:tls")).rootCertificates, ...ca] } : {}),
    });
  const worker = deliveryWorker({
    db: deps.db,
    clock: deps.clock,
    logger: deps.logger,
    sender,
    leaseMs: config.WEBHOOKS_LEASE_MS,
    concurrency: config.WEBHOOKS_CONCURRENCY,
    perEndpoint: config.WEBHOOKS_PER_ENDPOINT_CONCURRENCY,
    pollMs: config.WEBHOOKS_POLL_MS,
    disableAfterMs: config.WEBHOOK_DISABLE_AFTER_MS,
    secrets: webhookSecretBox(config),
    ...(deps.random ? { random: deps.random } : {}),
    ...(deps.workerId ? { workerId: deps.workerId } : {}),
  });
  const loop = worker.start();
  const statistics = attemptStatistics(deps.db, deps.logger);
  const fanOut = await startFanOut({
    db: deps.db,
    bus: deps.bus,
    clock: deps.clock,
    logger: deps.logger,
    groupId: config.WEBHOOKS_CONSUMER_GROUP,
    queued: (attempts) => {
      worker.nudge();
      statistics.queued(attempts);
    },
  });
  const retention = startEventLogRetention({ db: deps.db, clock: deps.clock, logger: deps.logger });
  return { worker, subscriptions: [fanOut, loop, retention] };
}
