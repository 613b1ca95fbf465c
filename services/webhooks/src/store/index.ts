import type { Db, Queryable } from "@platform/kit/db";
import { type AttemptStore, attemptStore } from "./attempt.store.js";
import { type DeliveryStore, deliveryStore } from "./delivery.store.js";
import { type EventLogStore, eventLogStore } from "./event-log.store.js";
import { type SubscriptionStore, subscriptionStore } from "./subscription.store.js";

/** Every aggregate's queries over one connection or transaction. */
export interface TxStore extends SubscriptionStore, AttemptStore, DeliveryStore, EventLogStore {}

/** The store: reads on the pool, writes in one transaction. */
export interface Store extends TxStore {
  tx<T>(fn: (s: TxStore) => Promise<T>): Promise<T>;
}

export function txStore(q: Queryable): TxStore {
  return { ...subscriptionStore(q), ...attemptStore(q), ...deliveryStore(q), ...eventLogStore(q) };
}

export function pgStore(db: Db): Store {
  return { ...txStore(db), tx: (fn) => db.tx((q) => fn(txStore(q))) };
}
