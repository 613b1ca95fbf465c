import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { PGlite, PGliteOptions, Transaction } from "@electric-sql/pglite";
import pg from "pg";
import { callTimeLeftMs, checkCallDeadline } from "./deadline.js";
import type { Logger } from "./logger.js";
import { quietLog } from "./quiet-log.js";

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

/** What a driver (a pool, a client, a PGlite or its transaction) runs: a query's rows, a script. */
interface Statements {
  rows(sql: string, params?: unknown[]): Promise<unknown[]>;
  script(sql: string): Promise<unknown>;
}

/**
 * The driver as a Queryable. Every statement first checks the deadline of the RPC it serves:
 * past it (or with the caller gone) the work stops with DeadlineExceeded rather than running on unseen.
 */
function deadlineChecked(driver: Statements): Queryable {
  return {
    query: async <T>(sql: string, params?: unknown[]) => {
      checkCallDeadline();
      return (await driver.rows(sql, params)) as T[];
    },
    exec: async (sql: string) => {
      checkCallDeadline();
      await driver.script(sql);
    },
    // Outside a transaction there is nothing to ride with, and no later call to report a failure.
    defer: () => {
      throw new Error("defer() needs a transaction (db.tx); use query() outside one");
    },
  };
}

interface DeferredWrite {
  sql: string;
  params: unknown[];
  mapError: ((err: unknown) => unknown) | undefined;
}

// A write that can ride in a WITH clause: a plain INSERT, UPDATE or DELETE without quoted text
// (whose `$n` the renumbering below could not tell from a parameter).
const COMBINABLE = /^\s*(?:INSERT|UPDATE|DELETE)\b[^'"]*$/i;

/**
 * Several deferred writes as one statement: all but the last as data-modifying CTEs, their
 * parameters renumbered after those before them. Postgres runs every part of it on one
 * snapshot, which is why deferred writes must not depend on each other or share rows.
 */
export function combineWrites(writes: readonly { sql: string; params: readonly unknown[] }[]): {
  sql: string;
  params: unknown[];
} {
  if (writes.length === 1) return { sql: writes[0]!.sql, params: [...writes[0]!.params] };
  const params: unknown[] = [];
  const parts = writes.map((w) => {
    const offset = params.length;
    params.push(...w.params);
    return w.sql.trim().replace(/\$(\d+)/g, (_m, n: string) => `$${Number(n) + offset}`);
  });
  const last = parts.pop() as string;
  return { sql: `WITH ${parts.map((p, i) => `deferred_${i} AS (${p})`).join(", ")} ${last}`, params };
}

const TARGET_TABLE = /^\s*(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+([\w.]+)/i;

/**
 * Deferred writes in the order given, cut into runs that can go out as one statement each: a
 * run never holds two writes to one table, because the parts of one statement run in no set
 * order, and the outbox's rows must get their sequence numbers in the order they were written.
 */
function combinable(writes: readonly DeferredWrite[]): DeferredWrite[][] {
  const runs: DeferredWrite[][] = [];
  let run: DeferredWrite[] = [];
  const tables = new Set<string>();
  for (const w of writes) {
    const table = COMBINABLE.test(w.sql) ? TARGET_TABLE.exec(w.sql)?.[1]?.toLowerCase() : undefined;
    if (run.length > 0 && (table === undefined || tables.has(table))) {
      runs.push(run);
      run = [];
      tables.clear();
    }
    run.push(w);
    if (table === undefined) {
      runs.push(run);
      run = [];
      tables.clear();
    } else tables.add(table);
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

/**
 * The Queryable of a transaction, with `defer`: the writes deferred so far go out before any
 * other statement, and `flush()` sends the rest before COMMIT. On this kind of machine a round
 * trip to Postgres costs more CPU on both sides than the statement it carries.
 */
function deferring(q: Queryable, combined: Queryable = q): Queryable & { flush(): Promise<void> } & CommitHooks {
  let pending: DeferredWrite[] = [];
  const hooks = commitHooks();
  async function flush(): Promise<void> {
    if (pending.length === 0) return;
    const writes = pending;
    pending = [];
    await sendWrites(combined, combinable(writes));
  }
  return {
    query: async <T>(sql: string, params?: unknown[]) => {
      await flush();
      return q.query<T>(sql, params);
    },
    exec: async (sql: string) => {
      await flush();
      await q.exec(sql);
    },
    defer: (sql, params, mapError) => {
      pending.push({ sql, params: params ?? [], mapError });
    },
    ...hooks,
    flush,
  };
}

interface CommitHooks {
  afterCommit(fn: () => void): void;
  /** Runs what `afterCommit` was given: call once the transaction committed. */
  committed(): void;
}

function commitHooks(): CommitHooks {
  const hooks: (() => void)[] = [];
  return {
    afterCommit: (fn) => {
      hooks.push(fn);
    },
    committed: () => {
      for (const fn of hooks) fn();
    },
  };
}

/**
 * Deferred writes, a statement per run of `combinable`; a failure is thrown as the first
 * `mapError` of the writes maps it, else as it is.
 */
async function sendWrites(target: Queryable, runs: readonly DeferredWrite[][]): Promise<void> {
  try {
    for (const run of runs) {
      const { sql, params } = combineWrites(run);
      await target.query(sql, params);
    }
  } catch (err) {
    for (const w of runs.flat()) {
      const mapped = w.mapError?.(err);
      if (mapped !== undefined && mapped !== err) throw mapped;
    }
    throw err;
  }
}

/** A Queryable that only collects deferred writes: what `writeOnly` gives its `fn`. */
function collecting(): Queryable & { writes: DeferredWrite[] } & CommitHooks {
  const writes: DeferredWrite[] = [];
  const readsBefore = () => {
    throw new Error("a writeOnly transaction cannot read: read before it, or use tx()");
  };
  return {
    writes,
    query: readsBefore,
    exec: readsBefore,
    defer: (sql, params, mapError) => {
      writes.push({ sql, params: params ?? [], mapError });
    },
    ...commitHooks(),
  };
}

/** `Db.writeOnly` over a driver: `single` sends one statement, `tx` opens a transaction. */
function writeOnlyOver(single: Queryable, tx: Db["tx"]): Db["writeOnly"] {
  return async (fn) => {
    const q = collecting();
    const result = await fn(q);
    const runs = combinable(q.writes);
    if (runs.length === 1) await sendWrites(single, runs);
    else if (runs.length > 1) await tx((t) => sendWrites(t, runs));
    q.committed();
    return result;
  };
}

const SCHEMA_NAME = /^[a-z][a-z0-9_]{0,62}$/;
function checkSchema(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid schema name '${schema}'`);
  return schema;
}

// int8 as number: versions and counts stay far below 2^53, and both drivers then agree.
const INT8_OID = 20;

export interface PgOptions {
  url: string;
  schema: string;
  max?: number;
  /** Reports connections lost while idle (once per interval during an outage). */
  logger?: Logger;
  /** How long a query waits for a free connection before failing (then 503); default 5 s. */
  connectTimeoutMs?: number;
}

// Connection-level failures: SQLSTATE class 08, the server shutting down or terminating the
// backend (57P01-57P03), too many connections, and the driver's socket errors.
// 58030 (io_error): the embedded database's directory cannot be written (DiskFailedError).
const UNAVAILABLE_SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300", "58030"]);
const UNAVAILABLE_ERRNOS = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);
const UNAVAILABLE_MESSAGES =
  /Connection terminated|not queryable|timeout exceeded when trying to connect|Connection ended|pool after calling end|PGlite is closed/i;

/**
 * True when `err` says the database could not be reached or the connection was lost (as
 * opposed to the statement being wrong): the work can be retried as it is, so the request
 * that met it gets a retryable 503 rather than a 500.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (
    typeof code === "string" &&
    (code.startsWith("08") || UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_ERRNOS.has(code))
  ) {
    return true;
  }
  return UNAVAILABLE_MESSAGES.test(err.message);
}

/** SQLSTATE query_canceled: here, a transaction's statement_timeout (its call's deadline) cut a query. */
export function isStatementTimeout(err: unknown): boolean {
  return err instanceof Error && (err as { code?: unknown }).code === "57014";
}

/**
 * BEGIN, with a statement_timeout of what remains of the deadline of the RPC being served
 * (in the same round trip), so a query that is still running at the deadline is cut there
 * instead of running on for a caller that has already been answered 504.
 */
function begin(options: TxOptions | undefined): string {
  const left = callTimeLeftMs();
  const timeout = left === undefined ? "" : `; SET LOCAL statement_timeout = ${left}`;
  return `BEGIN${timeout}${options?.lazyCommit ? "; SET LOCAL synchronous_commit = off" : ""}`;
}

/** Connections of a pool's `lazy` side: it serves single bookkeeping statements, one at a time per caller. */
const LAZY_POOL_SIZE = 2;

export function openPg({ url, schema, max = 10, logger, connectTimeoutMs = 5000 }: PgOptions): Db {
  checkSchema(schema);
  const types = {
    getTypeParser: (oid: number, format?: "text" | "binary") =>
      oid === INT8_OID ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format),
  };
  const quiet = logger && quietLog(logger);
  const newPool = (size: number, options?: string) => {
    const created = new pg.Pool({
      connectionString: url,
      max: size,
      types: types as pg.CustomTypesConfig,
      // Without it a request waits for a free connection forever while the database is away.
      connectionTimeoutMillis: connectTimeoutMs,
      keepAlive: true,
      ...(options ? { options } : {}),
    });
    // An idle client's error (server restart, pg_terminate_backend) must not crash the process;
    // the pool drops that client and opens another on demand.
    created.on("error", (err) => quiet?.failure("db.idle-connection", err, "database: an idle connection was lost"));
    // Every client keeps a listener of its own from its first moment: between the pool handing
    // it out and the borrower's listener there is a gap (a terminated backend's error can arrive
    // in the same read as the end of its connection handshake), and an 'error' event nobody
    // listens to ends the process. The failed query that follows tells the borrower.
    created.on("connect", (client) => {
      client.on("error", (err) => quiet?.failure("db.connection", err, "database: a connection was lost"));
    });
    return created;
  };
  const pool = newPool(max);
  // Opened on first use: most processes never ask for it.
  let lazyPool: pg.Pool | undefined;
  const nameOf = statementNames();
  // `prepareAny`: deferred writes combined, whose text is fixed per write however many parameters it has.
  const on = (client: pg.Pool | pg.PoolClient, prepareAny = false): Queryable =>
    deadlineChecked({
      rows: async (sql, params) => {
        const name = nameOf(sql, prepareAny ? undefined : params);
        const values = params as unknown[] | undefined;
        return (await (name === undefined ? client.query(sql, values) : client.query({ name, text: sql, values })))
          .rows;
      },
      script: (sql) => client.query(sql),
    });
  const root = on(pool);
  // A connection's own setting, so a statement run alone commits lazily without BEGIN and COMMIT.
  let lazySide: Queryable | undefined;
  const lazyQueryable = () => {
    lazyPool ??= newPool(LAZY_POOL_SIZE, "-c synchronous_commit=off");
    lazySide ??= on(lazyPool);
    return lazySide;
  };
  const lazy: Queryable = {
    query: (sql, params) => lazyQueryable().query(sql, params),
    exec: (sql) => lazyQueryable().exec(sql),
    defer: root.defer,
  };
  const db: Db = {
    schema,
    kind: "pg",
    query: root.query,
    exec: root.exec,
    defer: root.defer,
    lazy,
    writeOnly: writeOnlyOver(on(pool, true), (fn) => db.tx(fn)),
    async tx(fn, options) {
      const client = await pool.connect();
      // While checked out the client has no listener of the pool's: a connection lost now
      // (the outbox relay holds one across a Kafka publish) would be an unhandled 'error'
      // event and end the process. The failed query that follows rolls the work back.
      let lost: Error | undefined;
      const onError = (err: Error) => {
        lost = err;
      };
      client.on("error", onError);
      let broken: unknown;
      try {
        // After the wait for a connection, so the timeout is what remains now.
        await client.query(begin(options));
        const q = deferring(on(client), on(client, true));
        const result = await fn(q);
        await q.flush();
        // A write past its deadline rolls back: its caller answered 504, so a retry must find nothing done.
        checkCallDeadline();
        await client.query("COMMIT");
        q.committed();
        return result;
      } catch (err) {
        await client.query("ROLLBACK").catch((rollbackErr: unknown) => {
          broken = rollbackErr;
        });
        throw err;
      } finally {
        client.removeListener("error", onError);
        // With an error the pool destroys the client instead of handing a dead one out again.
        client.release((lost ?? broken) as Error | undefined);
      }
    },
    close: async () => {
      await Promise.all([pool.end(), lazyPool?.end()]);
    },
  };
  return db;
}

/**
 * Put first in a statement that pg must not prepare, so Postgres plans it for its parameters
 * each time. For a statement whose best plan depends on what it is given (an array's length)
 * and on a table that grows: a prepared statement's generic plan, cached while the table was
 * small, keeps its sequential scan until the table is analyzed again, and where autovacuum is
 * off (the development Postgres here) that is never.
 */
export const PLANNED_EACH_TIME = "/* planned each time */ ";

/** At most this many statements of a pool are prepared on each of its connections. */
const PREPARED_PER_POOL = 400;
/** A statement with more parameters than this is a batch whose text varies with its size: not prepared. */
const PREPARED_MAX_PARAMS = 32;

/**
 * Names under which pg prepares a statement once per connection (Parse on first use only):
 * Postgres then skips parsing and analysing it on every later run, and may reuse its plan.
 * On the events bench's write path Postgres then spent 3.4 ms of CPU a write against
 * 4.7–5.5 (docs/benchmarks.md, "Prepared statements"). Texts that vary with their input (batches) and anything past the
 * cap stay unnamed, so a connection holds a bounded set. Behind PgBouncer in transaction mode
 * this needs its `max_prepared_statements` (1.21+).
 */
function statementNames(): (sql: string, params: readonly unknown[] | undefined) => string | undefined {
  const names = new Map<string, string>();
  return (sql, params) => {
    const known = names.get(sql);
    if (known !== undefined) return known;
    if (sql.startsWith(PLANNED_EACH_TIME)) return undefined;
    if (names.size >= PREPARED_PER_POOL || (params?.length ?? 0) > PREPARED_MAX_PARAMS) return undefined;
    const name = `kit_${names.size}`;
    names.set(sql, name);
    return name;
  };
}

/**
 * `PGLITE_TEMPLATE`: a tarball of an initialised, empty cluster (PGlite's `dumpDataDir("none")`,
 * made by the same PGlite version). A new embedded database starts from it instead of running
 * initdb, which takes 2–5 s on a small machine; the test suites make one per run
 * (`libs/kit/test-support/pglite-template.ts`) because they open hundreds.
 */
export const PGLITE_TEMPLATE_ENV = "PGLITE_TEMPLATE";

/**
 * Opens the embedded Postgres: a directory keeps data across restarts, none keeps it in memory.
 * `fs`, when given, is the file system over `dataDir` (the embedded runtime's watched one).
 */
export async function openPglite(dataDir?: string, fs?: PGliteOptions["fs"]): Promise<PGlite> {
  const template = process.env[PGLITE_TEMPLATE_ENV];
  // A directory that already holds a cluster opens as it is; PGlite refuses to load over one.
  const fresh = !dataDir || !existsSync(join(dataDir, "PG_VERSION"));
  // Loaded here, when a process opens the embedded database, not when it loads kit: a service
  // on Postgres never needs it, and merely loading PGlite's module made a scratch server of
  // kit's path allocate 6 KB more per call and promote 13 MB more over 8,000 calls
  // (docs/benchmarks.md, "A getter per call, and PGlite loaded where nobody uses it").
  const [{ PGlite }, { btree_gist }] = await Promise.all([
    import("@electric-sql/pglite"),
    import("@electric-sql/pglite/contrib/btree_gist"),
  ]);
  return PGlite.create({
    ...(fs ? { fs } : dataDir ? { dataDir } : {}),
    ...(template && fresh ? { loadDataDir: new Blob([readFileSync(template)]) } : {}),
    extensions: { btree_gist },
    parsers: { [INT8_OID]: (v: string) => Number(v) },
  });
}

/** A service's view of the shared embedded instance: its own schema, closed by the owner of the instance. */
export function pgliteDb(instance: PGlite, schema: string): Db {
  checkSchema(schema);
  // The same deadline checks as over pg; PGlite has no statement_timeout to cut a running query.
  const on = (target: Pick<Transaction, "query" | "exec">): Queryable =>
    deadlineChecked({
      rows: async (sql, params) => (await target.query(sql, params)).rows,
      script: (sql) => target.exec(sql),
    });
  const root = on(instance);
  const db: Db = {
    schema,
    kind: "pglite",
    query: root.query,
    exec: root.exec,
    defer: root.defer,
    // PGlite has no disk flush worth sparing.
    lazy: root,
    writeOnly: writeOnlyOver(root, (fn) => db.tx(fn)),
    async tx(fn) {
      let q: ReturnType<typeof deferring> | undefined;
      const result = await instance.transaction(async (t) => {
        q = deferring(on(t));
        const value = await fn(q);
        await q.flush();
        checkCallDeadline();
        return value;
      });
      q?.committed();
      return result;
    },
    close: async () => {},
  };
  return db;
}

const DUPLICATE_DATABASE = "42P04";
const UNIQUE_VIOLATION = "23505";

/** Creates the database of a Postgres URL when it does not exist yet (a service's first start). */
export async function ensureDatabase(url: string, logger: Logger): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  if (!name) return;
  target.pathname = "/postgres";
  const admin = openPg({ url: target.toString(), schema: "public", max: 1 });
  try {
    const exists = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (exists.length > 0) return;
    await admin.exec(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
    logger.info({ database: name }, "database created");
  } catch (err) {
    // Another replica created it between the check and the CREATE.
    const code = (err as { code?: string }).code;
    if (code !== DUPLICATE_DATABASE && code !== UNIQUE_VIOLATION) throw err;
  } finally {
    await admin.close();
  }
}
