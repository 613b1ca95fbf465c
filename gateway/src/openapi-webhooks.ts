import type { DescMessage } from "@bufbuild/protobuf";
import {
  DealCreatedSchema,
  DealUpdatedSchema,
  InsightCreatedSchema,
  InsightItemAppendedSchema,
  QnaCreatedSchema,
  QnaUpdatedSchema,
} from "@platform/contracts/events/revenue";
import { SubscriptionDisabledSchema } from "@platform/contracts/events/webhooks";
import { WEBHOOK_EVENT_CATALOG, WEBHOOK_TEST_EVENT_TYPE, type WebhookEventKind } from "@platform/contracts/webhooks";
import { API_PREFIX } from "./route.js";
import { type JsonSchema, nullable } from "./schemas/common.js";
import { protoJsonSchema } from "./schemas/proto-json.js";

// The webhooks the platform sends, documented in the OpenAPI document's top-level `webhooks`
// (one POST per event kind), and the event catalog as the enum of the subscription bodies'
// `events`. The payload schemas these refer to are the webhooks context's (schemas/webhooks.ts).

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** How deliveries work, shown on every webhook of the document. */
const DELIVERY_RULES = [
  "POSTed as JSON (content-type application/json, user-agent Platform-Webhooks/1) to the subscription's endpointUrl, signed as Standard Webhooks (see the three headers). De-duplicate on webhook-id: delivery is at least once.",
  "Success: a 2xx answered within 15 s. Redirects are not followed (a 3xx is a failure).",
  "Retries after any other answer, a timeout or a connection error: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h after the failed attempt (8 attempts over about 28 h), each with ±10 % jitter. A Retry-After (seconds or an HTTP date) later than the scheduled wait is honoured, capped at 10 h; after the last retry the event is given up for the subscription (POST …/deliveries/{deliveryId}/redeliver sends it again).",
  "410 Gone disables the subscription at once (disabledReason endpoint-gone); no retry follows.",
  "A subscription whose deliveries have failed continuously for 5 days (no success, and failed attempts never further apart than the longest retry wait plus an hour: 12 h; WEBHOOK_DISABLE_AFTER_MS) is disabled (disabledReason failing); the attempt that disables it schedules no retry, and webhooks.subscription.disabled goes to the organization's other subscriptions that name it. PATCH enabled true re-enables it; POST …/recover sends what it missed.",
  "A test delivery (POST /webhook-subscriptions/{id}/test: the webhook.test ping, or an example of a catalog kind) carries test: true in the body; no real event does.",
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

/** The message each revenue kind carries (proto/platform/events/revenue/v1/events.proto). */
const REVENUE_DATA = {
  "revenue.deal.created": DealCreatedSchema,
  "revenue.deal.updated": DealUpdatedSchema,
  "revenue.qna.created": QnaCreatedSchema,
  "revenue.qna.updated": QnaUpdatedSchema,
  "revenue.insight.created": InsightCreatedSchema,
  "revenue.insight.item-appended": InsightItemAppendedSchema,
} satisfies Record<Extract<WebhookEventKind, `revenue.${string}`>, DescMessage>;

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
  if (kind === "webhooks.subscription.disabled") {
    const data = {
      ...protoJsonSchema(SubscriptionDisabledSchema),
      description: `The proto3 JSON of ${SubscriptionDisabledSchema.typeName}: subscriptionId, endpointUrl, reason (failing or endpoint-gone), disabledAt, orgId`,
    };
    return {
      v2: data,
      legacy: data,
      summary:
        "The platform disabled one of the organization's subscriptions (its deliveries failed for too long, or its endpoint answered 410); sent to the organization's other subscriptions that name it",
    };
  }
  const message = REVENUE_DATA[kind as keyof typeof REVENUE_DATA];
  const data = {
    ...protoJsonSchema(message),
    description: `The event's data as revenue publishes it: the proto3 JSON of ${message.typeName} (fields at their default value, such as an empty string, are omitted)`,
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
