import type { Db, Queryable } from "@platform/kit/db";
import { storeOnDb, type TransactionalStore } from "@platform/kit/service-store";
import { type AttemptStore, attemptStore } from "./attempt.store.js";
import { type DeliveryStore, deliveryStore } from "./delivery.store.js";
import { type EventLogStore, eventLogStore } from "./event-log.store.js";
import { type SubscriptionStore, subscriptionStore } from "./subscription.store.js";

/** Every aggregate's queries over one connection or transaction. */
export type TxStore = SubscriptionStore & AttemptStore & DeliveryStore & EventLogStore;

/** The store: reads on the pool, writes in one transaction. */
export type Store = TransactionalStore<TxStore, TxStore>;

export const txStore = (q: Queryable): TxStore => ({
  ...subscriptionStore(q),
  ...attemptStore(q),
  ...deliveryStore(q),
  ...eventLogStore(q),
});

export const pgStore: (db: Db) => Store = storeOnDb(txStore, txStore);
