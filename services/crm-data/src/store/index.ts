import type { Queryable } from "@platform/kit/db";
import { type OutboxStore, type OutboxTx, outboxStores } from "@platform/kit/service-store";
import { type ActivityStore, activityStore } from "./activity.store.js";
import { type RecordsStore, recordsStore } from "./records.store.js";
import { type TranscriptStore, transcriptStore } from "./transcript.store.js";

export type { ActivityStore } from "./activity.store.js";
export type { RecordsStore, Upserted } from "./records.store.js";
export type { TranscriptStore } from "./transcript.store.js";

type Aggregates = RecordsStore & ActivityStore & TranscriptStore;

/** The crm-data store within one transaction: every aggregate, and the outbox. */
export type TxStore = OutboxTx<Aggregates>;

export type Store = OutboxStore<Aggregates>;

/**
 * `txStore`: the store within the caller's transaction (`consumeOnce` and the sandbox open one).
 * `pgStore`: the crm-data store on the service database (Postgres or the embedded PGlite).
 */
export const { txStore, pgStore } = outboxStores(
  "crm",
  (q: Queryable): Aggregates => ({ ...recordsStore(q), ...activityStore(q), ...transcriptStore(q) }),
);
