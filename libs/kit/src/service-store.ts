import type { Db, Queryable } from "./db.js";
import { enqueueEvent, type OutboxEvent } from "./outbox.js";

// The one shape of a service's store (src/store/index.ts): its aggregates' queries over a
// connection or a transaction (`txStore`), and the same on the service database with `tx`
// opening one transaction (`pgStore`). A service that publishes events adds the outbox to
// its transactions, so an event is written with the change it announces.

/** A service's store within one transaction: its aggregates' queries and the outbox. */
export type OutboxTx<A> = A & {
  /** Writes an outbox row in this transaction (the relay publishes it after commit). */
  enqueue(event: OutboxEvent): Promise<string>;
};

/** A service's store on its database: `A`'s queries on the pool, writes in one transaction. */
export type TransactionalStore<A, Tx> = A & {
  /** One transaction: committed when `fn` resolves, rolled back when it throws. */
  tx<T>(fn: (s: Tx) => Promise<T>): Promise<T>;
};

/** The `txStore` of a service with an outbox in `schema`: its aggregates in the caller's transaction, and enqueue. */
export function withOutbox<A extends object>(schema: string, aggregates: (q: Queryable) => A) {
  return (q: Queryable): OutboxTx<A> => ({ ...aggregates(q), enqueue: (event) => enqueueEvent(q, schema, event) });
}

/** The `pgStore` of a service: `aggregates` on the database, and `tx` running `fn` on `txStore` in one transaction. */
export function storeOnDb<A extends object, Tx>(aggregates: (q: Queryable) => A, txStore: (q: Queryable) => Tx) {
  return (db: Db): TransactionalStore<A, Tx> => ({ ...aggregates(db), tx: (fn) => db.tx((q) => fn(txStore(q))) });
}

/** The store of a service with an outbox, on its database. */
export type OutboxStore<A> = TransactionalStore<A, OutboxTx<A>>;

/** Both stores of a service whose transactions carry its outbox (in `schema`): `txStore` and `pgStore`. */
export function outboxStores<A extends object>(schema: string, aggregates: (q: Queryable) => A) {
  const txStore = withOutbox(schema, aggregates);
  return { txStore, pgStore: storeOnDb(aggregates, txStore) };
}
