import { WEBHOOK_EVENT_CATALOG, WEBHOOK_TEST_EVENT_TYPE } from "@platform/contracts/webhooks";
import { API_PREFIX, type JsonSchema } from "../route.js";
import { nullable, timestamp } from "./common.js";

/** The event catalog: the kinds a subscription may name (the contracts' list, which the service checks too). */
export const webhookEventKindSchema = {
  $id: "WebhookEventKind",
  type: "string",
  enum: [...WEBHOOK_EVENT_CATALOG],
  description:
    "An event kind of the catalog. The three scheduling kinds carry the canonical Meeting; the revenue kinds carry revenue's event data. webhook.test (the test ping) is sent but cannot be subscribed to",
} as const;

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

/*
 * The request bodies take `events` as plain strings: the catalog check is the service's, so
 * an unknown kind is the spec's 422 webhook-events-invalid, not the 400 invalid-field a
 * schema enum would give. The OpenAPI document still shows the enum (documentWebhooks).
 */

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
    endpointUrl: { type: "string", description: "As on create (422 webhook-endpoint-invalid)" },
    events: {
      type: "array",
      items: { type: "string" },
      description: "Replaces the list: non-empty, catalog event kinds (422 webhook-events-invalid otherwise)",
    },
    description: { type: ["string", "null"], description: "null or an empty string clears it" },
    enabled: { type: "boolean", description: "true re-enables (and resets the failure run); false disables" },
  },
  additionalProperties: false,
};

/*
 * What the webhooks deliver, for the OpenAPI document: the two payload versions as component
 * schemas, and the top-level `webhooks` section (OpenAPI 3.1), one entry per event kind.
 */

/** Payload v2, the envelope of every subscription created through this API. */
export const webhookEventV2Schema = {
  $id: "WebhookEventV2",
  type: "object",
  description:
    "Payload v2: what subscriptions created through this API receive. data depends on the event kind (see the webhooks section)",
  required: ["id", "type", "timestamp", "data"],
  properties: {
    id: { type: "string", description: "The event id; equal to the webhook-id header and the same on every attempt" },
    type: { type: "string", description: `The event kind (WebhookEventKind), or ${WEBHOOK_TEST_EVENT_TYPE}` },
    timestamp: { ...timestamp, description: "When the event happened (UTC)" },
    data: { type: "object", description: "The event's data" },
  },
  additionalProperties: false,
} as const;

/** The legacy envelope subscriptions that predate v2 keep (never migrated). */
export const webhookEventLegacySchema = {
  $id: "WebhookEventLegacy",
  type: "object",
  description:
    "Payload legacy: the nested shape subscriptions that predate v2 keep forever (a new subscription is needed to receive v2). payload depends on the event kind (see the webhooks section)",
  required: ["event", "event_id", "created_at", "payload"],
  properties: {
    event: { type: "string", description: "The event kind" },
    event_id: { type: "string", description: "The event id; equal to the webhook-id header" },
    created_at: { ...timestamp, description: "When the event happened (UTC)" },
    payload: { type: "object", description: "The event's data" },
  },
  additionalProperties: false,
} as const;

/** The reduced meeting of the legacy payload's scheduling events. */
export const webhookLegacyMeetingSchema = {
  $id: "WebhookLegacyMeeting",
  type: "object",
  description: "The meeting in the legacy payload: a reduced, nested form of the Meeting",
  required: [
    "id",
    "title",
    "status",
    "start",
    "end",
    "timezone",
    "host",
    "invitee",
    "questions_and_answers",
    "join_url",
  ],
  properties: {
    id: { type: "string", description: "mtg_ id" },
    title: { type: "string" },
    status: { type: "string", description: "As the Meeting's status" },
    start: { ...timestamp, description: "The Meeting's startTime" },
    end: { ...timestamp, description: "The Meeting's endTime" },
    timezone: { type: "string", description: "The Meeting's timeZone" },
    host: {
      type: "object",
      required: ["id", "email", "name"],
      properties: {
        id: { type: "string", description: "usr_ id" },
        email: { type: "string", format: "email" },
        name: { type: "string", description: "Display name" },
      },
      additionalProperties: false,
    },
    invitee: {
      type: "object",
      description: "The Meeting's attendee",
      required: ["email", "name", "phone", "timezone"],
      properties: {
        email: { type: "string", format: "email" },
        name: { type: "string", description: "First and last name" },
        phone: nullable("string", "E.164; null when none"),
        timezone: nullable("string", "IANA zone; null when none"),
      },
      additionalProperties: false,
    },
    questions_and_answers: {
      type: "array",
      description: "The booking form's answers (smartScheduling.formValues)",
      items: {
        type: "object",
        required: ["question", "answer"],
        properties: { question: { type: "string", description: "The form field's key" }, answer: {} },
        additionalProperties: false,
      },
    },
    join_url: nullable("string", "The location's joinUrl; null when none"),
  },
  additionalProperties: false,
} as const;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** How deliveries work, shown on every webhook of the document. */
const DELIVERY_RULES = [
  "POSTed as JSON (content-type application/json, user-agent Platform-Webhooks/1) to the subscription's endpointUrl, signed as Standard Webhooks (see the three headers). De-duplicate on webhook-id: delivery is at least once.",
  "Success: a 2xx answered within 15 s. Redirects are not followed (a 3xx is a failure).",
  "Retries after any other answer, a timeout or a connection error: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h after the failed attempt (8 attempts over about 28 h), each with ±10 % jitter. A Retry-After (seconds or an HTTP date) later than the scheduled wait is honoured, capped at 10 h; after the last retry the event is given up for the subscription (POST …/deliveries/{deliveryId}/redeliver sends it again).",
  "410 Gone disables the subscription at once (disabledReason endpoint-gone); no retry follows.",
  "A subscription whose deliveries have failed continuously for 5 days (no success, and failed attempts never further apart than the longest retry wait plus an hour: 12 h) is disabled (disabledReason failing); the attempt that disables it schedules no retry. PATCH enabled true re-enables it.",
  "Payload version: v2 (WebhookEventV2) for subscriptions created through this API, legacy (WebhookEventLegacy) for subscriptions that predate v2.",
].join("\n\n");

const signatureHeaders = [
  {
    name: "webhook-id",
    in: "header",
    required: true,
    description: "The event id, the same on every attempt of the event",
    schema: { type: "string" },
  },
  {
    name: "webhook-timestamp",
    in: "header",
    required: true,
    description: "When this attempt was sent, in seconds since the epoch; reject values far from your clock",
    schema: { type: "string", pattern: "^[0-9]+$" },
  },
  {
    name: "webhook-signature",
    in: "header",
    required: true,
    description:
      'v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">, keyed with the base64-decoded part of the secret after whsec_. For 24 h after a rotation, two signatures separated by a space (the new secret\'s first)',
    schema: { type: "string" },
  },
];

const meetingReason = nullable("string", "The caller's reason; null when none was given");

/** What one event kind carries under `data` (v2) and `payload` (legacy). */
function eventData(kind: string): { v2: JsonSchema; legacy: JsonSchema; summary: string } {
  if (kind === WEBHOOK_TEST_EVENT_TYPE) {
    const data = {
      type: "object",
      required: ["subscriptionId", "message"],
      properties: { subscriptionId: { type: "string", description: "sub_ id" }, message: { type: "string" } },
    };
    return { v2: data, legacy: data, summary: "The test ping (POST /webhook-subscriptions/{id}/test); not retried" };
  }
  if (kind.startsWith("scheduling.")) {
    const withReason = !kind.endsWith(".booked");
    const shape = (meeting: JsonSchema) => ({
      type: "object",
      required: withReason ? ["meeting", "reason"] : ["meeting"],
      properties: { meeting, ...(withReason ? { reason: meetingReason } : {}) },
      additionalProperties: false,
    });
    const what = kind.endsWith(".booked")
      ? "A meeting was booked (POST /scheduled-meetings)"
      : kind.endsWith(".rescheduled")
        ? "A meeting was rescheduled (PATCH /scheduled-meetings/{meetingId}), with the caller's reason"
        : "A meeting was canceled (DELETE /scheduled-meetings/{meetingId}, the first time), with the caller's reason";
    return {
      v2: shape(ref("Meeting")),
      legacy: shape(ref("WebhookLegacyMeeting")),
      summary: `${what}. Bookings from preview slot tokens, and every later event of such a meeting, are not delivered`,
    };
  }
  const data = {
    type: "object",
    description: "The event's data as revenue publishes it (proto3 JSON of its platform.events.revenue.v1 message)",
  };
  return { v2: data, legacy: data, summary: `Revenue: ${kind.slice("revenue.".length)}` };
}

const operationName = (kind: string) =>
  `webhook${kind
    .split(/[.-]/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("")}`;

/** The top-level `webhooks` of the OpenAPI document: one POST per event kind, the test ping included. */
export function webhookOperations(): Record<string, JsonSchema> {
  return Object.fromEntries(
    [...WEBHOOK_EVENT_CATALOG, WEBHOOK_TEST_EVENT_TYPE].map((kind) => {
      const { v2, legacy, summary } = eventData(kind);
      const body = (envelope: string, dataKey: string, eventKey: string, data: JsonSchema) => ({
        allOf: [ref(envelope), { type: "object", properties: { [eventKey]: { const: kind }, [dataKey]: data } }],
      });
      const operation = {
        operationId: operationName(kind),
        summary,
        description: DELIVERY_RULES,
        tags: ["Webhook events"],
        // Receivers check the signature, not the API key.
        security: [],
        parameters: signatureHeaders,
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                oneOf: [
                  body("WebhookEventV2", "data", "type", v2),
                  body("WebhookEventLegacy", "payload", "event", legacy),
                ],
              },
            },
          },
        },
        responses: {
          "2XX": { description: "Delivered, when answered within 15 s" },
          "410": { description: "Gone: the subscription is disabled (endpoint-gone); nothing is retried" },
          default: {
            description:
              "Failed (as are a timeout, a connection error and a 3xx): retried 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h later (±10 % jitter; a later Retry-After is honoured, up to 10 h)",
          },
        },
      };
      return [kind, { post: operation }];
    }),
  );
}

/** Operations whose request body names event kinds: POST and PATCH of subscriptions. */
const EVENTS_BODIES: [path: string, method: string][] = [
  [`${API_PREFIX}/webhook-subscriptions`, "post"],
  [`${API_PREFIX}/webhook-subscriptions/{subscriptionId}`, "patch"],
];

type Json = Record<string, unknown>;

/**
 * The OpenAPI document with the webhooks documented: the `webhooks` section, and the catalog
 * as the enum of `events` in the request bodies (the runtime schemas leave that check to the
 * service, see above). Returns a new document; the given one is not changed.
 */
export function documentWebhooks<T extends object>(document: T): T {
  const doc = structuredClone(document) as Json;
  const paths = (doc.paths ?? {}) as Record<string, Record<string, Json>>;
  for (const [path, method] of EVENTS_BODIES) {
    const content = (paths[path]?.[method]?.requestBody as Json | undefined)?.content as Json | undefined;
    const schema = (content?.["application/json"] as Json | undefined)?.schema as Json | undefined;
    const events = (schema?.properties as Json | undefined)?.events as Json | undefined;
    if (!events) throw new Error(`${method.toUpperCase()} ${path} has no events in its request body`);
    events.items = ref("WebhookEventKind");
    events.minItems = 1;
  }
  doc.webhooks = { ...((doc.webhooks as Json | undefined) ?? {}), ...webhookOperations() };
  return doc as T;
}
