import type { Db, Queryable } from "@platform/kit/db";
import { enqueueEvent, type OutboxEvent } from "@platform/kit/outbox";
import { type HostStore, hostStore } from "./host.store.js";
import { type MeetingStore, meetingStore } from "./meeting.store.js";
import { type ScheduleStore, scheduleStore } from "./schedule.store.js";

export type { HostStore, IdentityUser } from "./host.store.js";
export type { MeetingStore, MeetingView } from "./meeting.store.js";
export type { ScheduleQuery, ScheduleStore } from "./schedule.store.js";

/** The scheduling store within one transaction: every aggregate, and the outbox. */
export interface TxStore extends ScheduleStore, MeetingStore, HostStore {
  /** Writes an outbox row in the same transaction as the change it announces. */
  enqueue(event: OutboxEvent): Promise<string>;
}

export interface Store extends ScheduleStore, MeetingStore, HostStore {
  /** One transaction: committed when `fn` resolves, rolled back when it throws. */
  tx<T>(fn: (s: TxStore) => Promise<T>): Promise<T>;
}

function aggregates(q: Queryable) {
  return { ...scheduleStore(q), ...meetingStore(q), ...hostStore(q) };
}

/** The store within the caller's transaction (`idempotentRpc` and `consumeOnce` open one). */
export function txStore(q: Queryable): TxStore {
  return { ...aggregates(q), enqueue: (event) => enqueueEvent(q, "scheduling", event) };
}

/** The scheduling store on the service database (Postgres or the embedded PGlite). */
export function pgStore(db: Db): Store {
  return { ...aggregates(db), tx: (fn) => db.tx((q) => fn(txStore(q))) };
}
