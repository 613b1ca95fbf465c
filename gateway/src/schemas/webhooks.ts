import { WEBHOOK_EVENT_CATALOG, WEBHOOK_TEST_EVENT_TYPE } from "@platform/contracts/webhooks";
import {
  closedObject,
  type JsonSchema,
  nullable,
  nullableTimestamp,
  strictObject,
  timestamp,
  timestamps,
} from "./common.js";

/** The event catalog: the kinds a subscription may name (the contracts' list, which the service checks too). */
export const webhookEventKindSchema = {
  $id: "WebhookEventKind",
  type: "string",
  enum: [...WEBHOOK_EVENT_CATALOG],
  description:
    "An event kind of the catalog. The three scheduling kinds carry the canonical Meeting; the revenue kinds carry revenue's event data. webhook.test (the test ping) is sent but cannot be subscribed to",
} as const;

/** Every property, with explicit nulls: the response shape is the same for every subscription. */
export const webhookSubscriptionSchema = closedObject(
  {
    id: { type: "string", description: "sub_ id" },
    endpointUrl: { type: "string", description: "HTTPS URL of a public host the events are POSTed to" },
    events: { type: "array", items: { $ref: "WebhookEventKind#" }, description: "Event kinds of the catalog" },
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
        "disabled-by-user (PATCH enabled false), endpoint-gone (the endpoint answered 410), failing (5 days of continuously failing deliveries); null while enabled",
    },
    disabledAt: nullableTimestamp("null while enabled"),
    previousSecretExpiresAt: nullableTimestamp(
      "After a rotation: until when the previous secret still signs (a second signature); null otherwise",
    ),
    ...timestamps,
    status: {
      type: "string",
      enum: ["healthy", "failing", "disabled"],
      description:
        "Endpoint health: disabled while enabled is false; failing while its latest attempts fail with no success since (the failure run the auto-disable measures); healthy otherwise",
    },
    lastSuccessAt: nullableTimestamp("When an attempt last succeeded; null when none did"),
    lastFailureAt: nullableTimestamp("When an attempt last failed; null when none did"),
    recentSuccessRate: {
      type: ["number", "null"],
      minimum: 0,
      maximum: 1,
      description: "Succeeded / sent among the attempts sent in the last 24 hours; null when none was sent",
    },
  },
  {
    id: "WebhookSubscription",
    description: "Where and which events an organization receives. The signing secret is never shown here",
  },
);

export const webhookSubscriptionWithSecretSchema = closedObject(
  {
    ...webhookSubscriptionSchema.properties,
    secret: { type: "string", description: "whsec_ + base64 key (Standard Webhooks); keep it, it is not shown again" },
  },
  {
    id: "WebhookSubscriptionWithSecret",
    description: "A subscription with its signing secret: returned once, by create and rotate-secret",
  },
);

export const webhookDeliverySchema = closedObject(
  {
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
    attemptedAt: nullableTimestamp("When it was sent; null while pending"),
    nextRetryAt: nullableTimestamp("When the retry of this failed attempt is due; null when none follows"),
    createdAt: timestamp,
  },
  { id: "WebhookDelivery", description: "One attempt to deliver one event to one subscription" },
);

/*
 * The request bodies take `events` as plain strings: the catalog check is the service's, so
 * an unknown kind is the spec's 422 webhook-events-invalid, not the 400 invalid-field a
 * schema enum would give. The OpenAPI document still shows the enum (documentWebhooks).
 */

/** The fields create and PATCH both take: the same types, only what each says of them differs. */
const subscriptionBodyFields = (says: { endpointUrl: string; events: string; description: string }) => ({
  endpointUrl: { type: "string", description: says.endpointUrl },
  events: { type: "array", items: { type: "string" }, description: says.events },
  description: { type: ["string", "null"], description: says.description },
});

/** POST /webhook-subscriptions. Semantic checks (HTTPS, public host, catalog) are the service's 422s. */
export const createSubscriptionSchema: JsonSchema = strictObject(
  subscriptionBodyFields({
    endpointUrl: "HTTPS URL of a public host (422 webhook-endpoint-invalid otherwise)",
    events: "Non-empty list of catalog event kinds (422 webhook-events-invalid otherwise)",
    description: "Up to 500 characters",
  }),
  { required: ["endpointUrl", "events"] },
);

/** PATCH /webhook-subscriptions/{id}: only present fields change. */
export const updateSubscriptionSchema: JsonSchema = strictObject({
  ...subscriptionBodyFields({
    endpointUrl: "As on create (422 webhook-endpoint-invalid)",
    events: "Replaces the list: non-empty, catalog event kinds (422 webhook-events-invalid otherwise)",
    description: "null or an empty string clears it",
  }),
  enabled: { type: "boolean", description: "true re-enables (and resets the failure run); false disables" },
});

/*
 * What the webhooks deliver, for the OpenAPI document: the two payload versions as component
 * schemas, and the top-level `webhooks` section (OpenAPI 3.1), one entry per event kind.
 */

/** The marker of a test delivery (POST …/test), absent from every other body. */
const testMarker = {
  type: "boolean",
  const: true,
  description:
    "Present (true) only on a test delivery: the webhook.test ping or an example of a catalog kind sent by POST /webhook-subscriptions/{id}/test (its attempt's trigger is test). Absent from every real event",
};

/** Payload v2, the envelope of every subscription created through this API. */
export const webhookEventV2Schema = strictObject(
  {
    id: { type: "string", description: "The event id; equal to the webhook-id header and the same on every attempt" },
    type: { type: "string", description: `The event kind (WebhookEventKind), or ${WEBHOOK_TEST_EVENT_TYPE}` },
    timestamp: { ...timestamp, description: "When the event happened (UTC)" },
    data: { type: "object", description: "The event's data" },
    test: testMarker,
  },
  {
    id: "WebhookEventV2",
    description:
      "Payload v2: what subscriptions created through this API receive. data depends on the event kind (see the webhooks section)",
    required: ["id", "type", "timestamp", "data"],
  },
);

/** The legacy envelope subscriptions that predate v2 keep (never migrated). */
export const webhookEventLegacySchema = strictObject(
  {
    event: { type: "string", description: "The event kind" },
    event_id: { type: "string", description: "The event id; equal to the webhook-id header" },
    created_at: { ...timestamp, description: "When the event happened (UTC)" },
    payload: { type: "object", description: "The event's data" },
    test: testMarker,
  },
  {
    required: ["event", "event_id", "created_at", "payload"],
    id: "WebhookEventLegacy",
    description:
      "Payload legacy: the nested shape subscriptions that predate v2 keep forever (a new subscription is needed to receive v2). payload depends on the event kind (see the webhooks section)",
  },
);

/** The reduced meeting of the legacy payload's scheduling events. */
export const webhookLegacyMeetingSchema = closedObject(
  {
    id: { type: "string", description: "mtg_ id" },
    title: { type: "string" },
    status: { type: "string", description: "As the Meeting's status" },
    start: { ...timestamp, description: "The Meeting's startTime" },
    end: { ...timestamp, description: "The Meeting's endTime" },
    timezone: { type: "string", description: "The Meeting's timeZone" },
    host: closedObject({
      id: { type: "string", description: "usr_ id" },
      email: { type: "string", format: "email" },
      name: { type: "string", description: "Display name" },
    }),
    invitee: closedObject(
      {
        email: { type: "string", format: "email" },
        name: { type: "string", description: "First and last name" },
        phone: nullable("string", "E.164; null when none"),
        timezone: nullable("string", "IANA zone; null when none"),
      },
      { description: "The Meeting's attendee" },
    ),
    questions_and_answers: {
      type: "array",
      description: "The booking form's answers (smartScheduling.formValues)",
      items: closedObject({ question: { type: "string", description: "The form field's key" }, answer: {} }),
    },
    join_url: nullable("string", "The location's joinUrl; null when none"),
  },
  {
    id: "WebhookLegacyMeeting",
    description: "The meeting in the legacy payload: a reduced, nested form of the Meeting",
  },
);

/** A recovery (POST …/recover) and its progress. */
export const webhookRecoverySchema = closedObject(
  {
    id: { type: "string", description: "wrc_ id" },
    subscriptionId: { type: "string", description: "sub_ id" },
    since: { ...timestamp, description: "Events that happened at or after this time were considered" },
    status: {
      type: "string",
      enum: ["running", "completed"],
      description: "running while any of its attempts is pending; completed once each was sent",
    },
    queued: {
      type: "integer",
      minimum: 0,
      description: "Attempts it queued: one per event no earlier attempt delivered (failed or given up, none pending)",
    },
    delivered: { type: "integer", minimum: 0, description: "Of those, how many succeeded" },
    failed: {
      type: "integer",
      minimum: 0,
      description: "Of those, how many failed (a recovery's attempts are not retried)",
    },
    createdAt: timestamp,
    completedAt: nullableTimestamp(
      "When its last attempt was sent (its creation when it queued nothing); null while running",
    ),
  },
  { id: "WebhookRecovery", description: "A recover of the events a subscription missed, with its progress" },
);

/** POST /webhook-subscriptions/{id}/recover. */
export const recoverBodySchema: JsonSchema = strictObject(
  {
    since: {
      type: "string",
      format: "date-time",
      description:
        "Recover events that happened at or after this time: at most 14 days back and not in the future (400 webhook-recovery-window-exceeded otherwise)",
    },
  },
  { required: ["since"] },
);

/** POST /webhook-subscriptions/{id}/test: optional (an absent body passes); without eventType the webhook.test ping. */
export const testBodySchema: JsonSchema = {
  description: "Optional: empty, or {eventType}",
  if: { type: "object" },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, never awaited
  then: strictObject({
    eventType: {
      type: "string",
      description:
        "A catalog kind (WebhookEventKind): sends an example of that kind, marked test: true, to this subscription only (422 webhook-events-invalid for another value)",
    },
  }),
};
