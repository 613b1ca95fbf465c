import { iso, isoOrNull, nullsWhenUnset, timestampsJson } from "@platform/contracts/rest/json";
import type { WebhookDelivery, WebhookRecovery, WebhookSubscription } from "@platform/contracts/webhooks";

// Fields the contract always sets: their absence is a service bug, so a plain Error, which
// the error handler logs and answers with an opaque 500.

export function subscriptionJson(s: WebhookSubscription) {
  return {
    id: s.id,
    endpointUrl: s.endpointUrl,
    events: s.events,
    description: s.description ?? null,
    enabled: s.enabled,
    payloadVersion: s.payloadVersion,
    disabledReason: s.disabledReason ?? null,
    disabledAt: isoOrNull(s.disableTime),
    previousSecretExpiresAt: isoOrNull(s.previousSecretExpireTime),
    ...timestampsJson(s),
    // A service older than the health fields sends no status: its enabled flag is all it knows.
    status: s.status || (s.enabled ? "healthy" : "disabled"),
    lastSuccessAt: isoOrNull(s.lastSuccessTime),
    lastFailureAt: isoOrNull(s.lastFailureTime),
    recentSuccessRate: s.recentSuccessRate ?? null,
  };
}

export function recoveryJson(r: WebhookRecovery) {
  return {
    id: r.id,
    subscriptionId: r.subscriptionId,
    since: iso(r.since, "since"),
    status: r.status,
    queued: r.queued,
    delivered: r.delivered,
    failed: r.failed,
    createdAt: iso(r.createTime, "create_time"),
    completedAt: isoOrNull(r.completeTime),
  };
}

export function subscriptionWithSecretJson(s: WebhookSubscription, secret: string) {
  return { ...subscriptionJson(s), secret };
}

export function deliveryJson(d: WebhookDelivery) {
  return {
    id: d.id,
    subscriptionId: d.subscriptionId,
    eventId: d.eventId,
    eventType: d.eventType,
    attempt: d.attempt,
    status: d.status,
    trigger: d.trigger,
    ...nullsWhenUnset(d, "responseStatus", "durationMs", "error"),
    scheduledAt: iso(d.scheduledTime, "scheduled_time"),
    attemptedAt: isoOrNull(d.attemptTime),
    nextRetryAt: isoOrNull(d.nextRetryTime),
    createdAt: iso(d.createTime, "create_time"),
  };
}

export interface CreateBody {
  endpointUrl: string;
  events: string[];
  description?: string | null;
}

export interface UpdateBody {
  endpointUrl?: string;
  events?: string[];
  description?: string | null;
  enabled?: boolean;
}

/** PATCH body → request: absent fields stay unset; a null description clears it (as ""). */
export function updateRequest(subscriptionId: string, body: UpdateBody) {
  return {
    subscriptionId,
    ...(body.endpointUrl !== undefined ? { endpointUrl: body.endpointUrl } : {}),
    ...(body.events !== undefined ? { events: { events: body.events } } : {}),
    ...(body.description !== undefined ? { description: body.description ?? "" } : {}),
    ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
  };
}
