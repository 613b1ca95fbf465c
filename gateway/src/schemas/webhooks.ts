import type { JsonSchema } from "../route.js";

const timestamp = { type: "string", format: "date-time" } as const;
const nullable = (type: string, description: string) => ({ type: [type, "null"], description }) as const;

/** Every property, with explicit nulls: the response shape is the same for every subscription. */
export const webhookSubscriptionSchema = {
  $id: "WebhookSubscription",
  type: "object",
  description: "Where and which events an organization receives. The signing secret is never shown here",
  required: [
    "id",
    "endpointUrl",
    "events",
    "description",
    "enabled",
    "payloadVersion",
    "disabledReason",
    "disabledAt",
    "previousSecretExpiresAt",
    "createdAt",
    "updatedAt",
  ],
  properties: {
    id: { type: "string", description: "sub_ id" },
    endpointUrl: { type: "string", description: "HTTPS URL of a public host the events are POSTed to" },
    events: { type: "array", items: { type: "string" }, description: "Event kinds of the catalog" },
    description: nullable("string", "Free text; null when none"),
    enabled: { type: "boolean", description: "False while the subscription receives nothing" },
    payloadVersion: {
      type: "string",
      enum: ["v2", "legacy"],
      description:
        "v2 (canonical Meeting) for every subscription created through this API; legacy for older ones, never migrated",
    },
    disabledReason: {
      type: ["string", "null"],
      enum: ["disabled-by-user", "endpoint-gone", "failing", null],
      description:
        "disabled-by-user (PATCH enabled false), endpoint-gone (the endpoint answered 410), failing (5 days of failed deliveries); null while enabled",
    },
    disabledAt: { type: ["string", "null"], format: "date-time", description: "null while enabled" },
    previousSecretExpiresAt: {
      type: ["string", "null"],
      format: "date-time",
      description: "After a rotation: until when the previous secret still signs (a second signature); null otherwise",
    },
    createdAt: timestamp,
    updatedAt: timestamp,
  },
  additionalProperties: false,
} as const;

export const webhookSubscriptionWithSecretSchema = {
  $id: "WebhookSubscriptionWithSecret",
  type: "object",
  description: "A subscription with its signing secret: returned once, by create and rotate-secret",
  required: [...webhookSubscriptionSchema.required, "secret"],
  properties: {
    ...webhookSubscriptionSchema.properties,
    secret: { type: "string", description: "whsec_ + base64 key (Standard Webhooks); keep it, it is not shown again" },
  },
  additionalProperties: false,
} as const;

export const webhookDeliverySchema = {
  $id: "WebhookDelivery",
  type: "object",
  description: "One attempt to deliver one event to one subscription",
  required: [
    "id",
    "subscriptionId",
    "eventId",
    "eventType",
    "attempt",
    "status",
    "trigger",
    "responseStatus",
    "durationMs",
    "error",
    "scheduledAt",
    "attemptedAt",
    "nextRetryAt",
    "createdAt",
  ],
  properties: {
    id: { type: "string", description: "wd_ id" },
    subscriptionId: { type: "string", description: "sub_ id" },
    eventId: { type: "string", description: "The event's id; also the webhook-id header, the same on every attempt" },
    eventType: { type: "string", description: "Event kind, or webhook.test for a test ping" },
    attempt: {
      type: "integer",
      description: "1 for an event's first attempt, counting up across retries and redeliveries",
    },
    status: { type: "string", enum: ["pending", "succeeded", "failed"] },
    trigger: {
      type: "string",
      enum: ["event", "retry", "redeliver", "test"],
      description: "What created the attempt",
    },
    responseStatus: nullable(
      "integer",
      "HTTP status the endpoint answered; null when none (pending, timeout, refused)",
    ),
    durationMs: nullable("integer", "Time to the end of the response; null while pending"),
    error: nullable("string", "Why it failed without an HTTP status (timeout, connection, refused target)"),
    scheduledAt: { ...timestamp, description: "When it is or was due" },
    attemptedAt: { type: ["string", "null"], format: "date-time", description: "When it was sent; null while pending" },
    nextRetryAt: {
      type: ["string", "null"],
      format: "date-time",
      description: "When the retry of this failed attempt is due; null when none follows",
    },
    createdAt: timestamp,
  },
  additionalProperties: false,
} as const;

/** POST /webhook-subscriptions. Semantic checks (HTTPS, public host, catalog) are the service's 422s. */
export const createSubscriptionSchema: JsonSchema = {
  type: "object",
  required: ["endpointUrl", "events"],
  properties: {
    endpointUrl: { type: "string", description: "HTTPS URL of a public host (422 webhook-endpoint-invalid otherwise)" },
    events: {
      type: "array",
      items: { type: "string" },
      description: "Non-empty list of catalog event kinds (422 webhook-events-invalid otherwise)",
    },
    description: { type: ["string", "null"], description: "Up to 500 characters" },
  },
  additionalProperties: false,
};

/** PATCH /webhook-subscriptions/{id}: only present fields change. */
export const updateSubscriptionSchema: JsonSchema = {
  type: "object",
  properties: {
    endpointUrl: { type: "string" },
    events: { type: "array", items: { type: "string" } },
    description: { type: ["string", "null"], description: "null or an empty string clears it" },
    enabled: { type: "boolean", description: "true re-enables (and resets the failure run); false disables" },
  },
  additionalProperties: false,
};
