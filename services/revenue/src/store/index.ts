import type { Db, Queryable } from "@platform/kit/db";
import { enqueueEvent, type OutboxEvent } from "@platform/kit/outbox";
import { type DealStore, dealStore } from "./deal.store.js";
import { type DealSchemaStore, dealSchemaStore } from "./deal-schema.store.js";
import { type InsightStore, insightStore } from "./insight.store.js";
import { type MeetingStore, meetingStore } from "./meeting.store.js";
import { type QnaStore, qnaStore } from "./qna.store.js";
import { type ReferenceStore, referenceStore } from "./references.store.js";

/** Every aggregate's queries over one connection or transaction, and the outbox. */
export interface TxStore extends DealSchemaStore, DealStore, QnaStore, InsightStore, MeetingStore, ReferenceStore {
  /** Adds an event to the outbox, in the transaction of the change it describes. */
  enqueue(event: OutboxEvent): Promise<string>;
}

/** The store: reads on the pool, writes in one transaction. */
export interface Store extends TxStore {
  tx<T>(fn: (s: TxStore) => Promise<T>): Promise<T>;
}

export function txStore(q: Queryable): TxStore {
  return {
    ...dealSchemaStore(q),
    ...dealStore(q),
    ...qnaStore(q),
    ...insightStore(q),
    ...meetingStore(q),
    ...referenceStore(q),
    enqueue: (event) => enqueueEvent(q, "revenue", event),
  };
}

export function pgStore(db: Db): Store {
  return { ...txStore(db), tx: (fn) => db.tx((q) => fn(txStore(q))) };
}
