// The database as services see it: the Queryable and Db interfaces, and column helpers.
// Implemented over Postgres (pg.ts) and the embedded PGlite (pglite.ts).
export type Row = Record<string, unknown>;

/** A nullable text column's value: its text, or null. */
export const textOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** A nullable timestamp column as a Date or null (pg gives Dates, PGlite may give strings). */
export const dateOrNull = (v: unknown): Date | null =>
  v === null || v === undefined ? null : new Date(v as string | Date);

/** What a handler or store needs: parameterised queries, plus multi-statement scripts. */
export interface Queryable {
  query<T = Row>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /**
   * An INSERT, UPDATE or DELETE whose result nobody reads, of rows no other deferred write of
   * the transaction touches (an outbox row, the idempotency record). In a transaction it goes
   * out just before the next statement, or the COMMIT, together with the other writes deferred
   * meanwhile: one statement (data-modifying CTEs), one round trip for all of them. Only in a
   * transaction (`db.tx`); outside one it throws. Its failure surfaces from the call that sends
   * it (or from `tx`), after `mapError` (which returns the error to throw instead, or
   * undefined) had its say.
   */
  defer(sql: string, params?: unknown[], mapError?: (err: unknown) => unknown): void;
  /**
   * In a transaction (`tx`, `writeOnly`): runs `fn` once the transaction has committed, never
   * when it rolls back. `fn` must not throw. Outside one there is no commit to wait for.
   */
  afterCommit?(fn: () => void): void;
}

/**
 * A service's database: Postgres over `pg`, or a schema of the embedded PGlite. SQL is
 * the same for both; tables live in the service's own schema (`db.schema`).
 */
export interface Db extends Queryable {
  readonly schema: string;
  readonly kind: "pg" | "pglite";
  /** One transaction: committed when `fn` resolves, rolled back when it throws. */
  tx<T>(fn: (q: Queryable) => Promise<T>, options?: TxOptions): Promise<T>;
  /**
   * A transaction that only writes (its reads were made before it): `fn` may only `defer`, and
   * its writes go out as ONE statement, which Postgres runs as a transaction of its own, with no
   * BEGIN and no COMMIT: one round trip where `tx` takes three or more. Nothing is sent when `fn`
   * throws. Writes that cannot share a statement (see `defer`) go out in one `tx` instead. There
   * is no statement_timeout (that needs a transaction block): the call's deadline is checked
   * before the statement is sent, and a statement of a few inserts does not run on.
   */
  writeOnly<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /**
   * Each statement its own transaction, committed the way `lazyCommit` commits (see TxOptions:
   * bookkeeping whose loss only makes work happen again), without a BEGIN and a COMMIT of its
   * own: one round trip where `tx(fn, { lazyCommit: true })` of one statement takes three.
   */
  readonly lazy: Queryable;
  close(): Promise<void>;
}

export interface TxOptions {
  /**
   * Bookkeeping whose loss would only make work happen again (an outbox row published twice, a
   * webhook sent twice, a lease taken again) and never lose any: the commit does not wait for
   * the WAL to reach the disk (`synchronous_commit = off`; a database crash can forget the last
   * few hundred milliseconds of such commits, never corrupt them). A commit's flush is most of
   * a short transaction's cost, and delivery and publishing are at least once by design.
   * Never for a write an API call reports done, nor one that consumes a Kafka message.
   */
  lazyCommit?: boolean;
}
