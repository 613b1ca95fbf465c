import type { Db, Queryable } from "@platform/kit/db";
import { type BlastStore, blastStore } from "./blast.store.js";
import { type IngestStore, ingestStore } from "./ingest.store.js";
import { type SentEmailStore, sentEmailStore } from "./sent-email.store.js";

/** Every aggregate's queries over one connection or transaction. */
export interface TxStore extends BlastStore, IngestStore, SentEmailStore {}

/** The store: reads on the pool, writes in one transaction. */
export interface Store extends TxStore {
  tx<T>(fn: (s: TxStore) => Promise<T>): Promise<T>;
}

export function txStore(q: Queryable): TxStore {
  return { ...blastStore(q), ...ingestStore(q), ...sentEmailStore(q) };
}

export function pgStore(db: Db): Store {
  return { ...txStore(db), tx: (fn) => db.tx((q) => fn(txStore(q))) };
}
