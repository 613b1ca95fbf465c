import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type {
  WebhookDeliverySchema,
  WebhookRecoverySchema,
  WebhookSubscriptionSchema,
} from "@platform/contracts/webhooks";
import type { Health } from "./domain/health.js";
import type { AttemptRecord, SubscriptionRecord } from "./domain/model.js";
import type { RecoveryView } from "./domain/recovery.js";

/** The subscription as the API shows it, with its endpoint's health: never its secrets. */
export function subscriptionMessage(
  s: SubscriptionRecord,
  now: Date,
  health: Health,
): MessageInitShape<typeof WebhookSubscriptionSchema> {
  const grace =
    s.previousSecretExpiresAt !== null && s.previousSecretExpiresAt > now ? s.previousSecretExpiresAt : null;
  return {
    id: s.id,
    endpointUrl: s.endpointUrl,
    events: s.events,
    ...(s.description !== null ? { description: s.description } : {}),
    enabled: s.enabled,
    payloadVersion: s.payloadVersion,
    ...(s.disabledReason !== null ? { disabledReason: s.disabledReason } : {}),
    ...(s.disabledAt ? { disableTime: timestampFromDate(s.disabledAt) } : {}),
    ...(grace ? { previousSecretExpireTime: timestampFromDate(grace) } : {}),
    createTime: timestampFromDate(s.createdAt),
    updateTime: timestampFromDate(s.updatedAt),
    status: health.status,
    ...(health.lastSuccessAt ? { lastSuccessTime: timestampFromDate(health.lastSuccessAt) } : {}),
    ...(health.lastFailureAt ? { lastFailureTime: timestampFromDate(health.lastFailureAt) } : {}),
    ...(health.recentSuccessRate !== null ? { recentSuccessRate: health.recentSuccessRate } : {}),
  };
}

export function recoveryMessage(r: RecoveryView): MessageInitShape<typeof WebhookRecoverySchema> {
  return {
    id: r.id,
    subscriptionId: r.subscriptionId,
    since: timestampFromDate(r.since),
    status: r.status,
    queued: r.queued,
    delivered: r.delivered,
    failed: r.failed,
    createTime: timestampFromDate(r.createdAt),
    ...(r.completedAt ? { completeTime: timestampFromDate(r.completedAt) } : {}),
  };
}

export function deliveryMessage(a: AttemptRecord): MessageInitShape<typeof WebhookDeliverySchema> {
  return {
    id: a.id,
    subscriptionId: a.subscriptionId,
    eventId: a.eventId,
    eventType: a.eventType,
    attempt: a.attempt,
    status: a.status,
    trigger: a.trigger,
    ...(a.responseStatus !== null ? { responseStatus: a.responseStatus } : {}),
    ...(a.durationMs !== null ? { durationMs: a.durationMs } : {}),
    ...(a.error !== null ? { error: a.error } : {}),
    scheduledTime: timestampFromDate(a.scheduledAt),
    ...(a.attemptedAt ? { attemptTime: timestampFromDate(a.attemptedAt) } : {}),
    ...(a.nextRetryAt ? { nextRetryTime: timestampFromDate(a.nextRetryAt) } : {}),
    createTime: timestampFromDate(a.createdAt),
  };
}
