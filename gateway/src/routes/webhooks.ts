import { type ProblemName, problem } from "@platform/kit/problems";
import { parseInstant } from "../mapping/time.js";
import {
  type CreateBody,
  deliveryJson,
  recoveryJson,
  subscriptionJson,
  subscriptionWithSecretJson,
  type UpdateBody,
  updateRequest,
} from "../mapping/webhooks.js";
import { defineRoute, type RouteSpec } from "../route.js";
import type { JsonSchema } from "../schemas/common.js";
import { eventSchema } from "../schemas/events.js";
import { pageQuery } from "../schemas/pagination.js";
import {
  createSubscriptionSchema,
  recoverBodySchema,
  testBodySchema,
  updateSubscriptionSchema,
  webhookDeliverySchema,
  webhookEventKindSchema,
  webhookEventLegacySchema,
  webhookEventV2Schema,
  webhookLegacyMeetingSchema,
  webhookRecoverySchema,
  webhookSubscriptionSchema,
  webhookSubscriptionWithSecretSchema,
} from "../schemas/webhooks.js";
import type { ServiceClients } from "../services.js";
import { getById, listOf, optionalBody, readerFrom, requiredFrom, textFilters } from "./shared.js";

const TAG = "Webhook subscriptions";
const subscription = { $ref: "WebhookSubscription#" };
const withSecret = { $ref: "WebhookSubscriptionWithSecret#" };
const delivery = { $ref: "WebhookDelivery#" };
const recovery = { $ref: "WebhookRecovery#" };
const NOT_FOUND: ProblemName[] = ["webhook-subscription-not-found"];
const VALIDATION: ProblemName[] = ["webhook-endpoint-invalid", "webhook-events-invalid"];

const subscriptionsPage = pageQuery(["createdAt", "updatedAt"], "-createdAt");
const deliveriesPage = pageQuery(["createdAt"], "-createdAt", {
  status: { type: "string", enum: ["pending", "succeeded", "failed"], description: "Only attempts in this status" },
});

// A response without the resource it exists for is a service bug: a plain Error, which the
// error handler logs and answers with an opaque 500.
const required = requiredFrom("webhooks");
const read = readerFrom("webhooks");

/**
 * Webhook subscriptions and their delivery attempts (webhooks service). Scopes
 * webhooks:read / webhooks:write; every write is write-tier and takes an Idempotency-Key,
 * required on POST and PATCH (a retried create must not make a second subscription with a
 * second secret), not used on DELETE (repeating it answers 404).
 */
export function routes(clients: ServiceClients): RouteSpec[] {
  const client = clients.webhooks.subscriptions;
  const ids = { subscriptionId: "sub_" };
  return [
    defineRoute({
      url: "/webhook-subscriptions",
      operationId: "listWebhookSubscriptions",
      summary: "List the organization's webhook subscriptions (at most 10)",
      tag: TAG,
      scope: "webhooks:read",
      ...listOf(subscriptionsPage, "WebhookSubscription", {
        list: (page, _q: object, options) => client.listWebhookSubscriptions(page, options),
        items: (res) => res.subscriptions,
        toJson: subscriptionJson,
      }),
    }),
    defineRoute({
      method: "POST",
      url: "/webhook-subscriptions",
      operationId: "createWebhookSubscription",
      summary:
        "Create a subscription (payload v2); the response carries its signing secret whsec_…, shown only this once",
      tag: TAG,
      scope: "webhooks:write",
      tier: "write",
      idempotencyKey: "required",
      schema: { body: createSubscriptionSchema, response: { 201: withSecret } },
      problems: [...VALIDATION, "webhook-limit-reached"],
      async handler(call, request, reply) {
        const body = request.body as CreateBody;
        const res = await client.createWebhookSubscription(
          {
            endpointUrl: body.endpointUrl,
            events: body.events,
            ...(typeof body.description === "string" ? { description: body.description } : {}),
          },
          call.callOptions(),
        );
        reply.code(201);
        return subscriptionWithSecretJson(required(res.subscription, "subscription"), res.secret);
      },
    }),
    defineRoute({
      url: "/webhook-subscriptions/:subscriptionId",
      operationId: "getWebhookSubscription",
      summary: "One webhook subscription (never its secret)",
      tag: TAG,
      scope: "webhooks:read",
      problems: NOT_FOUND,
      ...getById(
        "subscriptionId",
        "sub_",
        "WebhookSubscription",
        read(client.getWebhookSubscription, "subscription", subscriptionJson),
      ),
    }),
    defineRoute({
      method: "PATCH",
      url: "/webhook-subscriptions/:subscriptionId",
      operationId: "updateWebhookSubscription",
      summary: "Change endpointUrl, events, description or enabled (only the fields present)",
      tag: TAG,
      scope: "webhooks:write",
      tier: "write",
      idempotencyKey: "required",
      ids,
      schema: { body: updateSubscriptionSchema, response: { 200: subscription } },
      notWritable: {
        payloadVersion: "The payload version is fixed at creation; create a new subscription to receive v2.",
        secret: "Use POST /webhook-subscriptions/{id}/rotate-secret.",
      },
      problems: [...NOT_FOUND, ...VALIDATION],
      async handler(call, request) {
        const { subscriptionId } = request.params as { subscriptionId: string };
        const res = await client.updateWebhookSubscription(
          updateRequest(subscriptionId, request.body as UpdateBody),
          call.callOptions(),
        );
        return subscriptionJson(required(res.subscription, "subscription"));
      },
    }),
    defineRoute({
      method: "DELETE",
      url: "/webhook-subscriptions/:subscriptionId",
      operationId: "deleteWebhookSubscription",
      summary: "Delete a subscription and its delivery history (pending attempts are dropped)",
      tag: TAG,
      scope: "webhooks:write",
      tier: "write",
      ids,
      schema: { response: { 204: { type: "null", description: "Deleted" } } },
      problems: NOT_FOUND,
      async handler(call, request, reply) {
        const { subscriptionId } = request.params as { subscriptionId: string };
        await client.deleteWebhookSubscription({ subscriptionId }, call.callOptions());
        return reply.code(204).send();
      },
    }),
    defineRoute({
      method: "POST",
      url: "/webhook-subscriptions/:subscriptionId/rotate-secret",
      operationId: "rotateWebhookSecret",
      summary:
        "Issue a new signing secret; for 24 h the old one still signs too (two v1 signatures in webhook-signature)",
      tag: TAG,
      scope: "webhooks:write",
      tier: "write",
      idempotencyKey: "required",
      ids,
      schema: { response: { 200: withSecret } },
      problems: NOT_FOUND,
      async handler(call, request) {
        const { subscriptionId } = request.params as { subscriptionId: string };
        const res = await client.rotateWebhookSecret({ subscriptionId }, call.callOptions());
        return subscriptionWithSecretJson(required(res.subscription, "subscription"), res.secret);
      },
    }),
    defineRoute({
      method: "POST",
      url: "/webhook-subscriptions/:subscriptionId/test",
      operationId: "testWebhookSubscription",
      summary:
        "Queue a test delivery: the webhook.test ping, or with eventType an example of that catalog kind, marked test: true (sent at once to this subscription only, also when disabled; not retried)",
      tag: TAG,
      scope: "webhooks:write",
      tier: "write",
      idempotencyKey: "required",
      ids,
      optionalBody: true,
      schema: { body: testBodySchema, response: { 202: delivery } },
      problems: [...NOT_FOUND, "webhook-events-invalid"],
      async handler(call, request, reply) {
        const { subscriptionId } = request.params as { subscriptionId: string };
        const body = optionalBody<{ eventType?: string }>(request.body);
        const res = await client.testWebhookSubscription(
          { subscriptionId, ...(body.eventType !== undefined ? { eventType: body.eventType } : {}) },
          call.callOptions(),
        );
        reply.code(202);
        return deliveryJson(required(res.delivery, "delivery"));
      },
    }),
    defineRoute({
      url: "/webhook-subscriptions/:subscriptionId/deliveries",
      operationId: "listWebhookDeliveries",
      summary: "Delivery attempts of a subscription, newest first, pending retries included",
      tag: TAG,
      scope: "webhooks:read",
      problems: NOT_FOUND,
      ...listOf(deliveriesPage, "WebhookDelivery", {
        ids,
        list: (page, q: { status?: string }, options) =>
          client.listWebhookDeliveries({ ...page, ...textFilters(q, "status") }, options),
        items: (res) => res.deliveries,
        toJson: deliveryJson,
      }),
    }),
    defineRoute({
      method: "POST",
      url: "/webhook-subscriptions/:subscriptionId/deliveries/:deliveryId/redeliver",
      operationId: "redeliverWebhook",
      summary: "Queue a new attempt of the delivery's event, due now (same webhook-id; not retried)",
      deprecated:
        "use POST /webhook-subscriptions/{subscriptionId}/deliveries/{deliveryId}/resend (resendWebhookDelivery), which does the same and answers an unknown delivery with webhook-delivery-not-found. This one keeps working.",
      tag: TAG,
      scope: "webhooks:write",
      tier: "write",
      idempotencyKey: "required",
      ids: { ...ids, deliveryId: "wd_" },
      schema: { response: { 202: delivery } },
      problems: NOT_FOUND,
      async handler(call, request, reply) {
        const { subscriptionId, deliveryId } = request.params as { subscriptionId: string; deliveryId: string };
        const res = await client.redeliverWebhook({ subscriptionId, deliveryId }, call.callOptions());
        reply.code(202);
        return deliveryJson(required(res.delivery, "delivery"));
      },
    }),
    defineRoute({
      method: "POST",
      url: "/webhook-subscriptions/:subscriptionId/deliveries/:deliveryId/resend",
      operationId: "resendWebhookDelivery",
      summary:
        "Resend a delivery's event: a new attempt due now, same webhook-id and body, signed and address-checked like any (also to a disabled subscription; not retried)",
      tag: TAG,
      scope: "webhooks:write",
      tier: "write",
      idempotencyKey: "required",
      ids: { ...ids, deliveryId: "wd_" },
      schema: { response: { 202: delivery } },
      problems: [...NOT_FOUND, "webhook-delivery-not-found"],
      async handler(call, request, reply) {
        const { subscriptionId, deliveryId } = request.params as { subscriptionId: string; deliveryId: string };
        const res = await client.resendWebhookDelivery({ subscriptionId, deliveryId }, call.callOptions());
        reply.code(202);
        return deliveryJson(required(res.delivery, "delivery"));
      },
    }),
    defineRoute({
      method: "POST",
      url: "/webhook-subscriptions/:subscriptionId/recover",
      operationId: "recoverWebhookDeliveries",
      summary:
        "Recover what the endpoint missed: one new attempt of every event since `since` (at most 14 days) that no attempt delivered, in event order; read its progress with GET …/recoveries/{recoveryId}",
      tag: TAG,
      scope: "webhooks:write",
      tier: "write",
      idempotencyKey: "required",
      ids,
      schema: { body: recoverBodySchema, response: { 202: recovery } },
      problems: [...NOT_FOUND, "webhook-recovery-window-exceeded", "webhook-recovery-in-progress"],
      async handler(call, request, reply) {
        const { subscriptionId } = request.params as { subscriptionId: string };
        const { since: raw } = request.body as { since: string };
        const since = parseInstant(raw, { allowDate: false });
        if (!since) {
          throw problem("invalid-field", "since must be an RFC 3339 date-time with a zone.", { field: "since" });
        }
        const res = await client.recoverWebhookDeliveries({ subscriptionId, since }, call.callOptions());
        reply.code(202);
        return recoveryJson(required(res.recovery, "recovery"));
      },
    }),
    defineRoute({
      method: "GET",
      url: "/webhook-subscriptions/:subscriptionId/recoveries/:recoveryId",
      operationId: "getWebhookRecovery",
      summary: "A recovery and its progress (running until each of its attempts was sent)",
      tag: TAG,
      scope: "webhooks:read",
      tier: "read",
      ids: { ...ids, recoveryId: "wrc_" },
      schema: { response: { 200: recovery } },
      problems: [...NOT_FOUND, "webhook-recovery-not-found"],
      async handler(call, request) {
        const { subscriptionId, recoveryId } = request.params as { subscriptionId: string; recoveryId: string };
        const res = await client.getWebhookRecovery({ subscriptionId, recoveryId }, call.callOptions());
        return recoveryJson(required(res.recovery, "recovery"));
      },
    }),
  ];
}

/**
 * Shared JSON schemas ($id'd) the routes above reference, and the payload envelopes the
 * document's `webhooks` section references (components of the OpenAPI document).
 */
export const schemas: readonly JsonSchema[] = [
  webhookEventKindSchema,
  webhookSubscriptionSchema,
  webhookSubscriptionWithSecretSchema,
  webhookDeliverySchema,
  webhookRecoverySchema,
  webhookEventV2Schema,
  webhookEventLegacySchema,
  webhookLegacyMeetingSchema,
  // The event log's entry (routes/events.ts): the body of a v2 delivery.
  eventSchema,
];
