import type { Queryable } from "@platform/kit/db";
import { type OutboxStore, type OutboxTx, outboxStores } from "@platform/kit/service-store";
import { type HostStore, hostStore } from "./host.store.js";
import { type MeetingStore, meetingStore } from "./meeting.store.js";
import { type ScheduleStore, scheduleStore } from "./schedule.store.js";

export type { HostStore, IdentityUser } from "./host.store.js";
export type { MeetingStore, MeetingView } from "./meeting.store.js";
export type { ScheduleQuery, ScheduleStore } from "./schedule.store.js";

type Aggregates = ScheduleStore & MeetingStore & HostStore;

/** The scheduling store within one transaction: every aggregate, and the outbox. */
export type TxStore = OutboxTx<Aggregates>;

export type Store = OutboxStore<Aggregates>;

/**
 * `txStore`: the store within the caller's transaction (`idempotentRpc` and `consumeOnce` open one).
 * `pgStore`: the scheduling store on the service database (Postgres or the embedded PGlite).
 */
export const { txStore, pgStore } = outboxStores(
  "scheduling",
  (q: Queryable): Aggregates => ({ ...scheduleStore(q), ...meetingStore(q), ...hostStore(q) }),
);
