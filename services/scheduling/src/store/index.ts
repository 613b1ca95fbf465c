import type { Db, Queryable } from "@platform/kit/db";
import { type OutboxTx, storeOnDb, type TransactionalStore, withOutbox } from "@platform/kit/service-store";
import { type HostStore, hostStore } from "./host.store.js";
import { type MeetingStore, meetingStore } from "./meeting.store.js";
import { type ScheduleStore, scheduleStore } from "./schedule.store.js";

export type { HostStore, IdentityUser } from "./host.store.js";
export type { MeetingStore, MeetingView } from "./meeting.store.js";
export type { ScheduleQuery, ScheduleStore } from "./schedule.store.js";

type Aggregates = ScheduleStore & MeetingStore & HostStore;

/** The scheduling store within one transaction: every aggregate, and the outbox. */
export type TxStore = OutboxTx<Aggregates>;

export type Store = TransactionalStore<Aggregates, TxStore>;

const aggregates = (q: Queryable): Aggregates => ({ ...scheduleStore(q), ...meetingStore(q), ...hostStore(q) });

/** The store within the caller's transaction (`idempotentRpc` and `consumeOnce` open one). */
export const txStore: (q: Queryable) => TxStore = withOutbox("scheduling", aggregates);

/** The scheduling store on the service database (Postgres or the embedded PGlite). */
export const pgStore: (db: Db) => Store = storeOnDb(aggregates, txStore);
