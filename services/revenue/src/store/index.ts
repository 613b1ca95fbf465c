import type { Queryable } from "@platform/kit/db";
import { type OutboxStore, type OutboxTx, outboxStores } from "@platform/kit/service-store";
import { type DealStore, dealStore } from "./deal.store.js";
import { type DealNamesStore, dealNamesStore } from "./deal-names.store.js";
import { type DealSchemaStore, dealSchemaStore } from "./deal-schema.store.js";
import { type InsightStore, insightStore } from "./insight.store.js";
import { type MeetingStore, meetingStore } from "./meeting.store.js";
import { type QnaStore, qnaStore } from "./qna.store.js";
import { type ReferenceStore, referenceStore } from "./references.store.js";

type Aggregates = DealSchemaStore &
  DealStore &
  DealNamesStore &
  QnaStore &
  InsightStore &
  MeetingStore &
  ReferenceStore;

/** Every aggregate's queries over one connection or transaction, and the outbox. */
export type TxStore = OutboxTx<Aggregates>;

/** The store: reads on the pool, writes in one transaction. */
export type Store = OutboxStore<Aggregates>;

export const { txStore, pgStore } = outboxStores(
  "revenue",
  (q: Queryable): Aggregates => ({
    ...dealSchemaStore(q),
    ...dealStore(q),
    ...dealNamesStore(q),
    ...qnaStore(q),
    ...insightStore(q),
    ...meetingStore(q),
    ...referenceStore(q),
  }),
);
