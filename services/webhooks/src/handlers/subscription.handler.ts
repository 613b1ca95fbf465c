import {
  create,
  type DescMessage,
  type DescMethodUnary,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { context, propagation } from "@opentelemetry/api";
import { WebhookSubscriptionService } from "@platform/contracts/webhooks";
import type { Clock } from "@platform/kit/clock";
import { apiContext } from "@platform/kit/connect";
import { createCursorCodec } from "@platform/kit/cursor";
import type { Db } from "@platform/kit/db";
import { replayOfMethod } from "@platform/kit/idempotent-method";
import { idempotentRpc } from "@platform/kit/idempotent-rpc";
import { parseId } from "@platform/kit/ids";
import { keysetPage } from "@platform/kit/keyset";
import { parseSort } from "@platform/kit/pagination";
import { problem } from "@platform/kit/problems";
import type { SecretBox } from "@platform/kit/secret-box";
import { getRecovery, recoverDeliveries, resendDelivery } from "../application/deliveries.js";
import { healthOfAll } from "../application/health.js";
import {
  changeSubscription,
  createSubscription,
  ownedSubscription,
  redeliver,
  rotateSecret,
  sendTestEvent,
  subscriptionNotFound,
} from "../application/subscriptions.js";
import type { EndpointPolicy } from "../domain/endpoint.js";
import { healthOf, NO_ATTEMPTS } from "../domain/health.js";
import type { AttemptStatus, SubscriptionRecord } from "../domain/model.js";
import { deliveryMessage, subscriptionMessage } from "../messages.js";
import { ATTEMPT_SORT_KEYS } from "../store/attempt.store.js";
import { pgStore, type TxStore, txStore } from "../store/index.js";
import { SUBSCRIPTION_SORT_KEYS } from "../store/subscription.store.js";

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

/** The webhooks API: subscriptions of the caller's org and their delivery attempts. */
export function subscriptionHandlers(deps: SubscriptionDeps): ServiceImpl<typeof WebhookSubscriptionService> {
  const { db, clock, endpoints, secrets } = deps;
  const store = pgStore(db);
  const cursors = createCursorCodec(deps.cursorSecret);
  const rpc = WebhookSubscriptionService.method;

  /** The answer of a create or rotate (first time or replay) with its secret opened for the client. */
  const withClearSecret = <R extends { secret: string }>(response: R): R => {
    response.secret = response.secret ? secrets.open(response.secret) : "";
    return response;
  };

  /** A write once per Idempotency-Key, in one transaction with its record. */
  const write = async <I extends DescMessage, O extends DescMessage>(
    ctx: HandlerContext,
    method: DescMethodUnary<I, O>,
    message: MessageShape<I>,
    fn: (w: TxStore) => Promise<MessageInitShape<O>>,
  ): Promise<MessageShape<O>> =>
    idempotentRpc({ db, clock }, ctx, { schema: method.input, message }, method.output, async (q) =>
      create(method.output, await fn(txStore(q))),
    );

  /** The subscriptions as the API shows them, each with its endpoint's health. */
  const shown = async (subscriptions: readonly SubscriptionRecord[]) => {
    const health = await healthOfAll(store, clock, subscriptions);
    const now = clock.now();
    return subscriptions.map((s) => subscriptionMessage(s, now, health.get(s.id) ?? healthOf(s, NO_ATTEMPTS)));
  };

  return {
    async listWebhookSubscriptions(req, ctx) {
      const { orgId } = apiContext(ctx);
      const sort = parseSort(req.sort, Object.keys(SUBSCRIPTION_SORT_KEYS), "-createdAt");
      const page = await keysetPage(cursors, SUBSCRIPTION_SORT_KEYS, sort, req, (query) =>
        store.listSubscriptions(orgId, query),
      );
      return { subscriptions: await shown(page.items), nextCursor: page.nextCursor ?? "" };
    },

    async createWebhookSubscription(req, ctx) {
      // A replay answers what it answered first, without asking other services again.
      const replay = await replayOfMethod({ db, clock }, ctx, rpc.createWebhookSubscription, req);
      if (replay) return withClearSecret(replay);
      const { orgId } = apiContext(ctx);
      const created = await createSubscription(
        { clock, secrets, endpoints },
        { orgId, endpointUrl: req.endpointUrl, events: req.events, description: req.description },
        (insert) => write(ctx, rpc.createWebhookSubscription, req, insert),
      );
      return withClearSecret(created);
    },

    async getWebhookSubscription(req, ctx) {
      const { orgId } = apiContext(ctx);
      const [subscription] = await shown([await ownedSubscription(store, orgId, req.subscriptionId)]);
      return { subscription };
    },

    async updateWebhookSubscription(req, ctx) {
      // A replay answers what it answered first, without asking other services again.
      const replay = await replayOfMethod({ db, clock }, ctx, rpc.updateWebhookSubscription, req);
      if (replay) return replay;
      const { orgId } = apiContext(ctx);
      const id = parseId("sub_", req.subscriptionId, "subscriptionId");
      return changeSubscription(
        { clock, endpoints },
        {
          orgId,
          id,
          endpointUrl: req.endpointUrl,
          events: req.events?.events,
          description: req.description,
          enabled: req.enabled,
        },
        (update) => write(ctx, rpc.updateWebhookSubscription, req, update),
      );
    },

    async deleteWebhookSubscription(req, ctx) {
      const { orgId } = apiContext(ctx);
      const id = parseId("sub_", req.subscriptionId, "subscriptionId");
      const deleted = await store.tx((w) => w.deleteSubscription(orgId, id));
      if (!deleted) throw subscriptionNotFound(id);
      return {};
    },

    async rotateWebhookSecret(req, ctx) {
      const { orgId } = apiContext(ctx);
      const rotated = await write(ctx, rpc.rotateWebhookSecret, req, (w) =>
        rotateSecret(w, { clock, secrets }, orgId, req.subscriptionId),
      );
      return withClearSecret(rotated);
    },

    async testWebhookSubscription(req, ctx) {
      const { orgId } = apiContext(ctx);
      const response = await write(ctx, rpc.testWebhookSubscription, req, (w) => {
        // The ping's delivery continues the trace of this request.
        const carrier: { traceparent?: string } = {};
        propagation.inject(context.active(), carrier);
        return sendTestEvent(w, clock, {
          orgId,
          subscriptionId: req.subscriptionId,
          traceparent: carrier.traceparent,
          eventType: req.eventType,
        });
      });
      deps.queued?.();
      return response;
    },

    async listWebhookDeliveries(req, ctx) {
      const { orgId } = apiContext(ctx);
      const subscription = await ownedSubscription(store, orgId, req.subscriptionId);
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
        store.listAttempts(subscription.id, status, query),
      );
      return { deliveries: page.items.map(deliveryMessage), nextCursor: page.nextCursor ?? "" };
    },

    async redeliverWebhook(req, ctx) {
      const { orgId } = apiContext(ctx);
      const deliveryId = parseId("wd_", req.deliveryId, "deliveryId");
      const response = await write(ctx, rpc.redeliverWebhook, req, (w) =>
        redeliver(w, clock, { orgId, subscriptionId: req.subscriptionId, deliveryId }),
      );
      deps.queued?.();
      return response;
    },

    async resendWebhookDelivery(req, ctx) {
      const { orgId } = apiContext(ctx);
      const deliveryId = parseId("wd_", req.deliveryId, "deliveryId");
      const response = await write(ctx, rpc.resendWebhookDelivery, req, (w) =>
        resendDelivery(w, clock, { orgId, subscriptionId: req.subscriptionId, deliveryId }),
      );
      deps.queued?.();
      return response;
    },

    async recoverWebhookDeliveries(req, ctx) {
      const { orgId } = apiContext(ctx);
      const since = req.since ? timestampDate(req.since) : undefined;
      const response = await write(ctx, rpc.recoverWebhookDeliveries, req, (w) =>
        recoverDeliveries(w, clock, { orgId, subscriptionId: req.subscriptionId, since }),
      );
      deps.queued?.();
      return response;
    },

    async getWebhookRecovery(req, ctx) {
      const { orgId } = apiContext(ctx);
      return getRecovery(store, { orgId, subscriptionId: req.subscriptionId, recoveryId: req.recoveryId });
    },
  };
}
