import type { Db, Queryable } from "@platform/kit/db";
import { storeOnDb, type TransactionalStore } from "@platform/kit/service-store";
import { type BlastStore, blastStore } from "./blast.store.js";
import { type IngestStore, ingestStore } from "./ingest.store.js";
import { type SentEmailStore, sentEmailStore } from "./sent-email.store.js";

/** Every aggregate's queries over one connection or transaction. */
export type TxStore = BlastStore & IngestStore & SentEmailStore;

/** The store: reads on the pool, writes in one transaction. */
export type Store = TransactionalStore<TxStore, TxStore>;

export const txStore = (q: Queryable): TxStore => ({ ...blastStore(q), ...ingestStore(q), ...sentEmailStore(q) });

export const pgStore: (db: Db) => Store = storeOnDb(txStore, txStore);
