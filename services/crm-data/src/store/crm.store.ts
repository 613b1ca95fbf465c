import type { Db, Queryable } from "@platform/kit/db";
import { enqueueEvent, type OutboxEvent } from "@platform/kit/outbox";
import { activityOn } from "./activity.store.js";
import { recordsOn } from "./records.store.js";
import { transcriptsOn } from "./transcript.store.js";

/** Every read and write of crm-data on one connection or transaction. */
export function crmOn(q: Queryable) {
  return {
    ...recordsOn(q),
    ...activityOn(q),
    ...transcriptsOn(q),
    /** Writes an outbox row in this transaction (the relay publishes it after commit). */
    enqueue: (event: OutboxEvent): Promise<string> => enqueueEvent(q, "crm", event),
  };
}

export type CrmReads = ReturnType<typeof crmOn>;

export interface CrmStore extends CrmReads {
  /** One transaction: committed when `fn` resolves, rolled back when it throws. */
  tx<T>(fn: (w: CrmReads) => Promise<T>): Promise<T>;
}

export function pgCrmStore(db: Db): CrmStore {
  return { ...crmOn(db), tx: (fn) => db.tx((q) => fn(crmOn(q))) };
}
