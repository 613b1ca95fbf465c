import type { Queryable } from "@platform/kit/db";
import { type OutboxTx, outboxStores } from "@platform/kit/service-store";
import { type AttemptStore, attemptStore } from "./attempt.store.js";
import { type DeliveryStore, deliveryStore } from "./delivery.store.js";
import { type EventLogStore, eventLogStore } from "./event-log.store.js";
import { type RecoveryStore, recoveryStore } from "./recovery.store.js";
import { type SubscriptionStore, subscriptionStore } from "./subscription.store.js";

/** Every aggregate's queries over one connection or transaction. */
type Aggregates = SubscriptionStore & AttemptStore & DeliveryStore & EventLogStore & RecoveryStore;

/** The aggregates in one transaction, with the outbox (webhooks.subscription.disabled). */
export type TxStore = OutboxTx<Aggregates>;

const aggregates = (q: Queryable): Aggregates => ({
  ...subscriptionStore(q),
  ...attemptStore(q),
  ...deliveryStore(q),
  ...eventLogStore(q),
  ...recoveryStore(q),
});

/** The store: reads on the pool, writes in one transaction (its outbox in the webhooks schema). */
export const { txStore, pgStore } = outboxStores("webhooks", aggregates);

export type Store = ReturnType<typeof pgStore>;
