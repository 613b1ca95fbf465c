import { WEBHOOK_EVENT_CATALOG } from "@platform/contracts/webhooks";
import type { JsonSchema } from "./common.js";

/** The event log keeps events this long (documentation; the webhooks service purges them). */
export const EVENT_RETENTION_DAYS = 30;

/** One event of the log: exactly the v2 envelope its webhook deliveries POST. */
export const eventSchema = {
  $id: "Event",
  type: "object",
  description: `An event of the organization's log: byte for byte the body of its v2 webhook deliveries (WebhookEventV2), whether or not a subscription receives it, so clients can de-duplicate across the log, the stream and webhooks by id. Kept ${EVENT_RETENTION_DAYS} days. Bookings from preview slot tokens (and later events of such a meeting) and sandbox seed events are not logged, as they are not delivered.`,
  required: ["id", "type", "timestamp", "data"],
  properties: {
    id: { type: "string", description: "evt_…; equal to the webhook-id header of its deliveries" },
    type: { $ref: "WebhookEventKind#" },
    timestamp: { type: "string", format: "date-time", description: "When the event happened (UTC)" },
    data: { type: "object", description: "The event's data, as in the v2 delivery (see the webhooks section)" },
  },
  additionalProperties: false,
} as const;

const typeFilter = {
  type: "array",
  items: { type: "string", enum: [...WEBHOOK_EVENT_CATALOG] },
  description: "Only events of this kind; repeat the parameter for several (type=a&type=b)",
} as const;

/** The query of GET /events. */
export const listEventsQuery: JsonSchema = {
  type: "object",
  properties: {
    cursor: { type: "string", description: "Opaque cursor from nextCursor; omit for the first page" },
    limit: { type: "integer", description: "Page size; clamped to 1..100", default: 25 },
    type: typeFilter,
    createdAfter: {
      type: "string",
      description: "ISO 8601 date-time with zone (or a date, meaning its start in UTC): events at or after it",
    },
    createdBefore: {
      type: "string",
      description: "ISO 8601 date-time with zone (or a date, meaning its start in UTC): events before it",
    },
  },
};

/** The query of GET /events/stream. */
export const streamEventsQuery: JsonSchema = {
  type: "object",
  properties: { type: typeFilter },
};

/** What GET /events/stream answers (documentation: the body is a text/event-stream). */
export const eventStreamSchema: JsonSchema = {
  type: "string",
  description: [
    "Server-Sent Events. Each event of the log is one message: `id:` its event id, `data:` its v2 envelope (the Event schema, one line of JSON).",
    "Comments (lines starting with `:`) are heartbeats, sent every 15 s so idle connections stay open.",
    "To resume after a disconnect, reconnect with the header `Last-Event-ID: <the last id received>`: the stream continues with the next event recorded after it, without gaps or repeats (an id not in the log, e.g. older than the 30-day retention, is 400 invalid-cursor).",
    "Without Last-Event-ID the stream starts with events recorded from now on.",
  ].join(" "),
};
