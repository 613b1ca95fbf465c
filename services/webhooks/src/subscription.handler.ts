import { create, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { context, propagation } from "@opentelemetry/api";
import {
  CreateWebhookSubscriptionRequestSchema,
  CreateWebhookSubscriptionResponseSchema,
  RedeliverWebhookRequestSchema,
  RedeliverWebhookResponseSchema,
  RotateWebhookSecretRequestSchema,
  RotateWebhookSecretResponseSchema,
  TestWebhookSubscriptionRequestSchema,
  TestWebhookSubscriptionResponseSchema,
  UpdateWebhookSubscriptionRequestSchema,
  UpdateWebhookSubscriptionResponseSchema,
  type WebhookSubscriptionService,
} from "@platform/contracts/webhooks";
import type { Clock } from "@platform/kit/clock";
import { apiContext } from "@platform/kit/connect";
import { createCursorCodec } from "@platform/kit/cursor";
import type { Db, Queryable } from "@platform/kit/db";
import { idempotentRpc, replayOf } from "@platform/kit/idempotent-rpc";

import { newId, parseId } from "@platform/kit/ids";
import { keysetPage } from "@platform/kit/keyset";
import { parseSort } from "@platform/kit/pagination";
import { problem } from "@platform/kit/problems";
import type { SecretBox } from "@platform/kit/secret-box";
import { checkEvents, TEST_EVENT_TYPE } from "./domain/catalog.js";
import { checkEndpoint, type EndpointPolicy } from "./domain/endpoint.js";
import { newSecret } from "./domain/signature.js";
import type { AttemptRecord, AttemptStatus, SubscriptionRecord } from "./model.js";
import { deliveryMessage, subscriptionMessage } from "./proto.js";
import { ATTEMPT_SORT_KEYS, SUBSCRIPTION_SORT_KEYS, webhooksStore } from "./store/webhooks.store.js";

/** How long a rotated-out secret keeps signing, next to the new one. */
export const SECRET_GRACE_MS = 24 * 3_600_000;
const MAX_DESCRIPTION = 500;
const ATTEMPT_STATUSES: readonly string[] = ["pending", "succeeded", "failed"];

export interface SubscriptionDeps {
  db: Db;
  clock: Clock;
  cursorSecret: string;
  endpoints: EndpointPolicy;
  /**
   * Seals the signing secrets: the subscription row and the stored Idempotency-Key response
   * hold them sealed; only the answer to the client carries the clear secret.
   */
  secrets: SecretBox;
  /** Called after an attempt was queued (test, redeliver), so an in-process worker sends it now. */
  queued?: () => void;
}

const notFound = (id: string) => problem("webhook-subscription-not-found", `Webhook subscription ${id} was not found.`);

async function validEndpoint(raw: string, policy: EndpointPolicy): Promise<string> {
  const checked = await checkEndpoint(raw, policy);
  if (!checked.ok) throw problem("webhook-endpoint-invalid", checked.reason, { field: "endpointUrl" });
  return raw;
}

function validEvents(events: readonly string[]): string[] {
  const checked = checkEvents(events);
  if (!checked.ok) throw problem("webhook-events-invalid", checked.reason, { field: "events" });
  return checked.events;
}

function validDescription(raw: string | undefined): string | null {
  if (raw === undefined || raw.trim() === "") return null;
  if ([...raw].length > MAX_DESCRIPTION) {
    throw problem("invalid-field", `description must be at most ${MAX_DESCRIPTION} characters.`, {
      field: "description",
    });
  }
  return raw;
}

/** The webhooks API: subscriptions of the caller's org and their delivery attempts. */
export function subscriptionHandlers(deps: SubscriptionDeps): ServiceImpl<typeof WebhookSubscriptionService> {
  const { db, clock, endpoints, secrets } = deps;
  const cursors = createCursorCodec(deps.cursorSecret);

  /** The answer of a create or rotate (first time or replay) with its secret opened for the client. */
  const withClearSecret = <R extends { secret: string }>(response: R): R => {
    response.secret = response.secret ? secrets.open(response.secret) : "";
    return response;
  };

  /** A write once per Idempotency-Key, in one transaction with its record. */
  const write = async <I extends DescMessage, O extends DescMessage>(
    ctx: HandlerContext,
    request: { schema: I; message: MessageShape<I> },
    responseSchema: O,
    fn: (q: Queryable) => Promise<MessageInitShape<O>>,
  ): Promise<MessageShape<O>> =>
    idempotentRpc({ db, clock }, ctx, request, responseSchema, async (q) => create(responseSchema, await fn(q)));

  const owned = async (q: Queryable, orgId: string, rawId: string, lock = false): Promise<SubscriptionRecord> => {
    const id = parseId("sub_", rawId, "subscriptionId");
    const found = await webhooksStore(q).findSubscription(orgId, id, lock);
    if (!found) throw notFound(id);
    return found;
  };

  /** Queues a single-shot attempt of an event, due now. */
  const queueAttempt = async (
    q: Queryable,
    subscription: SubscriptionRecord,
    event: { id: string; type: string },
    trigger: "redeliver" | "test",
  ): Promise<AttemptRecord> => {
    const store = webhooksStore(q);
    const now = clock.now();
    const attempt: AttemptRecord = {
      id: newId("wd_"),
      subscriptionId: subscription.id,
      eventId: event.id,
      eventType: event.type,
      attempt: await store.nextAttemptNumber(subscription.id, event.id),
      trigger,
      status: "pending",
      scheduledAt: now,
      attemptedAt: null,
      responseStatus: null,
      durationMs: null,
      error: null,
      nextRetryAt: null,
      retryStep: null,
      createdAt: now,
    };
    await store.insertAttempt(attempt);
    return attempt;
  };

  return {
    async listWebhookSubscriptions(req, ctx) {
      const { orgId } = apiContext(ctx);
      const sort = parseSort(req.sort, Object.keys(SUBSCRIPTION_SORT_KEYS), "-createdAt");
      const page = await keysetPage(cursors, SUBSCRIPTION_SORT_KEYS, sort, req, (query) =>
        webhooksStore(db).listSubscriptions(orgId, query),
      );
      const now = clock.now();
      return { subscriptions: page.items.map((s) => subscriptionMessage(s, now)), nextCursor: page.nextCursor ?? "" };
    },

    async createWebhookSubscription(req, ctx) {
      // A replay answers what it answered first, without asking other services again.
      const replay = await replayOf(
        { db, clock },
        ctx,
        { schema: CreateWebhookSubscriptionRequestSchema, message: req },
        CreateWebhookSubscriptionResponseSchema,
      );
      if (replay) return withClearSecret(replay);
      const { orgId } = apiContext(ctx);
      // Checked before the transaction: resolving the host must not hold a connection.
      const endpointUrl = await validEndpoint(req.endpointUrl, endpoints);
      const events = validEvents(req.events);
      const description = validDescription(req.description);
      const secret = newSecret();
      const created = await write(
        ctx,
        { schema: CreateWebhookSubscriptionRequestSchema, message: req },
        CreateWebhookSubscriptionResponseSchema,
        async (q) => {
          const now = clock.now();
          const subscription: SubscriptionRecord = {
            id: newId("sub_"),
            orgId,
            endpointUrl,
            events,
            description,
            enabled: true,
            // Every subscription created through this API version receives the canonical Meeting.
            payloadVersion: "v2",
            secret: secrets.seal(secret),
            previousSecret: null,
            previousSecretExpiresAt: null,
            disabledReason: null,
            disabledAt: null,
            failingSince: null,
            lastFailureAt: null,
            createdAt: now,
            updatedAt: now,
          };
          await webhooksStore(q).insertSubscription(subscription);
          // Sealed in the idempotency record too; opened below for this answer and for replays.
          return { subscription: subscriptionMessage(subscription, now), secret: subscription.secret };
        },
      );
      return withClearSecret(created);
    },

    async getWebhookSubscription(req, ctx) {
      const { orgId } = apiContext(ctx);
      return { subscription: subscriptionMessage(await owned(db, orgId, req.subscriptionId), clock.now()) };
    },

    async updateWebhookSubscription(req, ctx) {
      // A replay answers what it answered first, without asking other services again.
      const replay = await replayOf(
        { db, clock },
        ctx,
        { schema: UpdateWebhookSubscriptionRequestSchema, message: req },
        UpdateWebhookSubscriptionResponseSchema,
      );
      if (replay) return replay;
      const { orgId } = apiContext(ctx);
      const id = parseId("sub_", req.subscriptionId, "subscriptionId");
      const endpointUrl = req.endpointUrl === undefined ? undefined : await validEndpoint(req.endpointUrl, endpoints);
      const events = req.events === undefined ? undefined : validEvents(req.events.events);
      const description = req.description === undefined ? undefined : validDescription(req.description);
      return write(
        ctx,
        { schema: UpdateWebhookSubscriptionRequestSchema, message: req },
        UpdateWebhookSubscriptionResponseSchema,
        async (q) => {
          const now = clock.now();
          const current = await owned(q, orgId, id, true);
          const next: SubscriptionRecord = {
            ...current,
            ...(endpointUrl !== undefined ? { endpointUrl } : {}),
            ...(events !== undefined ? { events } : {}),
            ...(description !== undefined ? { description } : {}),
            updatedAt: now,
          };
          if (req.enabled === true && !current.enabled) {
            // A fresh start: the failure run that disabled it no longer counts.
            Object.assign(next, {
              enabled: true,
              disabledReason: null,
              disabledAt: null,
              failingSince: null,
              lastFailureAt: null,
            });
          } else if (req.enabled === false && current.enabled) {
            Object.assign(next, { enabled: false, disabledReason: "disabled-by-user", disabledAt: now });
          }
          await webhooksStore(q).updateSubscription(next);
          return { subscription: subscriptionMessage(next, now) };
        },
      );
    },

    async deleteWebhookSubscription(req, ctx) {
      const { orgId } = apiContext(ctx);
      const id = parseId("sub_", req.subscriptionId, "subscriptionId");
      const deleted = await db.tx((q) => webhooksStore(q).deleteSubscription(orgId, id));
      if (!deleted) throw notFound(id);
      return {};
    },

    async rotateWebhookSecret(req, ctx) {
      const { orgId } = apiContext(ctx);
      const rotated = await write(
        ctx,
        { schema: RotateWebhookSecretRequestSchema, message: req },
        RotateWebhookSecretResponseSchema,
        async (q) => {
          const now = clock.now();
          const current = await owned(q, orgId, req.subscriptionId, true);
          // The secret being replaced keeps signing for 24 h; one rotated out earlier stops now.
          const next: SubscriptionRecord = {
            ...current,
            secret: secrets.seal(newSecret()),
            previousSecret: current.secret,
            previousSecretExpiresAt: new Date(now.getTime() + SECRET_GRACE_MS),
            updatedAt: now,
          };
          await webhooksStore(q).updateSubscription(next);
          return { subscription: subscriptionMessage(next, now), secret: next.secret };
        },
      );
      return withClearSecret(rotated);
    },

    async testWebhookSubscription(req, ctx) {
      const { orgId } = apiContext(ctx);
      const response = await write(
        ctx,
        { schema: TestWebhookSubscriptionRequestSchema, message: req },
        TestWebhookSubscriptionResponseSchema,
        async (q) => {
          const subscription = await owned(q, orgId, req.subscriptionId);
          const now = clock.now();
          // The ping's delivery continues the trace of this request.
          const carrier: { traceparent?: string } = {};
          propagation.inject(context.active(), carrier);
          const event = {
            id: newId("evt_"),
            orgId,
            ...(carrier.traceparent ? { traceparent: carrier.traceparent } : {}),
            type: TEST_EVENT_TYPE,
            data: {
              subscriptionId: subscription.id,
              message: "This is a test event from the Platform Integration API.",
            },
            occurredAt: now,
          };
          await webhooksStore(q).insertEvent(event);
          return { delivery: deliveryMessage(await queueAttempt(q, subscription, event, "test")) };
        },
      );
      deps.queued?.();
      return response;
    },

    async listWebhookDeliveries(req, ctx) {
      const { orgId } = apiContext(ctx);
      const subscription = await owned(db, orgId, req.subscriptionId);
      if (req.status !== "" && !ATTEMPT_STATUSES.includes(req.status)) {
        throw problem(
          "invalid-filter",
          `status filter '${req.status}' is not one of: ${ATTEMPT_STATUSES.join(", ")}.`,
          {
            field: "status",
          },
        );
      }
      const status = req.status === "" ? undefined : (req.status as AttemptStatus);
      const sort = parseSort(req.sort, Object.keys(ATTEMPT_SORT_KEYS), "-createdAt");
      const page = await keysetPage(cursors, ATTEMPT_SORT_KEYS, sort, req, (query) =>
        webhooksStore(db).listAttempts(subscription.id, status, query),
      );
      return { deliveries: page.items.map(deliveryMessage), nextCursor: page.nextCursor ?? "" };
    },

    async redeliverWebhook(req, ctx) {
      const { orgId } = apiContext(ctx);
      const deliveryId = parseId("wd_", req.deliveryId, "deliveryId");
      const response = await write(
        ctx,
        { schema: RedeliverWebhookRequestSchema, message: req },
        RedeliverWebhookResponseSchema,
        async (q) => {
          const subscription = await owned(q, orgId, req.subscriptionId);
          const original = await webhooksStore(q).findAttempt(subscription.id, deliveryId);
          if (!original) {
            throw problem(
              "webhook-subscription-not-found",
              `Delivery ${deliveryId} of subscription ${subscription.id} was not found.`,
            );
          }
          const event = { id: original.eventId, type: original.eventType };
          return { delivery: deliveryMessage(await queueAttempt(q, subscription, event, "redeliver")) };
        },
      );
      deps.queued?.();
      return response;
    },
  };
}
