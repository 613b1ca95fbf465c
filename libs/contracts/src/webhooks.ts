export * from "./gen/platform/webhooks/v1/event_log_pb.js";
export * from "./gen/platform/webhooks/v1/webhook_subscription_pb.js";

/*
 * The webhook event catalog: the event kinds a subscription may name, in the order the
 * documentation lists them. It is public contract (the webhooks service validates
 * subscriptions against it, the gateway documents it as the OpenAPI enum of `events`), so it
 * lives here where both read it. The names are the `ce_type` the producers publish
 * (@platform/kit/events EVENT_TYPES; a webhooks test keeps the two in step).
 */
export const WEBHOOK_EVENT_CATALOG = [
  "scheduling.smartscheduler.booked",
  "scheduling.smartscheduler.rescheduled",
  "scheduling.smartscheduler.canceled",
  "revenue.deal.created",
  "revenue.deal.updated",
  "revenue.qna.created",
  "revenue.qna.updated",
  "revenue.insight.created",
  "revenue.insight.item-appended",
  "webhooks.subscription.disabled",
] as const;

export type WebhookEventKind = (typeof WEBHOOK_EVENT_CATALOG)[number];

/** The ping POST /webhook-subscriptions/{id}/test sends; always delivered, never subscribed to. */
export const WEBHOOK_TEST_EVENT_TYPE = "webhook.test";
