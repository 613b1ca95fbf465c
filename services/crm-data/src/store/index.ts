import type { Db, Queryable } from "@platform/kit/db";
import { enqueueEvent, type OutboxEvent } from "@platform/kit/outbox";
import { type ActivityStore, activityStore } from "./activity.store.js";
import { type RecordsStore, recordsStore } from "./records.store.js";
import { type TranscriptStore, transcriptStore } from "./transcript.store.js";

export type { ActivityStore } from "./activity.store.js";
export type { RecordsStore, Upserted } from "./records.store.js";
export type { TranscriptStore } from "./transcript.store.js";

/** The crm-data store within one transaction: every aggregate, and the outbox. */
export interface TxStore extends RecordsStore, ActivityStore, TranscriptStore {
  /** Writes an outbox row in this transaction (the relay publishes it after commit). */
  enqueue(event: OutboxEvent): Promise<string>;
}

export interface Store extends RecordsStore, ActivityStore, TranscriptStore {
  /** One transaction: committed when `fn` resolves, rolled back when it throws. */
  tx<T>(fn: (s: TxStore) => Promise<T>): Promise<T>;
}

function aggregates(q: Queryable) {
  return { ...recordsStore(q), ...activityStore(q), ...transcriptStore(q) };
}

/** The store within the caller's transaction (`consumeOnce` and the sandbox open one). */
export function txStore(q: Queryable): TxStore {
  return { ...aggregates(q), enqueue: (event) => enqueueEvent(q, "crm", event) };
}

/** The crm-data store on the service database (Postgres or the embedded PGlite). */
export function pgStore(db: Db): Store {
  return { ...aggregates(db), tx: (fn) => db.tx((q) => fn(txStore(q))) };
}
