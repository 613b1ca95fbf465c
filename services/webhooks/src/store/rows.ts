import { dateOrNull, type Row } from "@platform/kit/db";
import { endpointOrigin } from "../domain/endpoint.js";
import type {
  AttemptRecord,
  AttemptStatus,
  AttemptTrigger,
  DisabledReason,
  SubscriptionRecord,
} from "../domain/model.js";
import type { PayloadVersion } from "../domain/payload.js";

const must = (v: unknown): Date => new Date(v as string | Date);

export function toSubscription(r: Row): SubscriptionRecord {
  return {
    id: String(r.id),
    orgId: String(r.org_id),
    endpointUrl: String(r.endpoint_url),
    events: r.events as string[],
    description: (r.description as string | null) ?? null,
    enabled: Boolean(r.enabled),
    payloadVersion: r.payload_version as PayloadVersion,
    secret: String(r.secret),
    previousSecret: (r.previous_secret as string | null) ?? null,
    previousSecretExpiresAt: dateOrNull(r.previous_secret_expires_at),
    disabledReason: (r.disabled_reason as DisabledReason | null) ?? null,
    disabledAt: dateOrNull(r.disabled_at),
    failingSince: dateOrNull(r.failing_since),
    lastFailureAt: dateOrNull(r.last_failure_at),
    createdAt: must(r.created_at),
    updatedAt: must(r.updated_at),
  };
}

export function toAttempt(r: Row): AttemptRecord {
  return {
    id: String(r.id),
    subscriptionId: String(r.subscription_id),
    eventId: String(r.event_id),
    eventType: String(r.event_type),
    attempt: Number(r.attempt),
    trigger: r.trigger as AttemptTrigger,
    status: r.status as AttemptStatus,
    scheduledAt: must(r.scheduled_at),
    attemptedAt: dateOrNull(r.attempted_at),
    responseStatus: r.response_status === null ? null : Number(r.response_status),
    durationMs: r.duration_ms === null ? null : Number(r.duration_ms),
    error: (r.error as string | null) ?? null,
    nextRetryAt: dateOrNull(r.next_retry_at),
    retryStep: r.retry_step === null ? null : Number(r.retry_step),
    createdAt: must(r.created_at),
  };
}

/** The columns of a subscription that an update may change, in the order subscriptionChanges binds them. */
export const CHANGEABLE = [
  "endpoint_url",
  "events",
  "description",
  "enabled",
  "secret",
  "previous_secret",
  "previous_secret_expires_at",
  "disabled_reason",
  "disabled_at",
  "failing_since",
  "updated_at",
  "last_failure_at",
  "endpoint_origin",
] as const;

/** The values of CHANGEABLE: one list for the insert and the update, so neither misses a column. */
export function subscriptionChanges(s: SubscriptionRecord): unknown[] {
  return [
    s.endpointUrl,
    s.events,
    s.description,
    s.enabled,
    s.secret,
    s.previousSecret,
    s.previousSecretExpiresAt,
    s.disabledReason,
    s.disabledAt,
    s.failingSince,
    s.updatedAt,
    s.lastFailureAt,
    endpointOrigin(s.endpointUrl),
  ];
}
