// The Postgres database over a `pg` pool: transactions with the call's deadline as their
// statement_timeout, a lazily committing side pool, and the database's creation on first start.
import pg from "pg";
import { callTimeLeftMs, checkCallDeadline } from "./deadline.js";
import { deferring, writeOnlyOver } from "./deferred-writes.js";
import { checkSchema, deadlineChecked, INT8_OID } from "./driver.js";
import type { Logger } from "./logger.js";
import { observePool } from "./pool-metrics.js";
import { statementNames } from "./prepared-statements.js";
import type { Db, Queryable, TxOptions } from "./queryable.js";
import { quietLog } from "./quiet-log.js";

export interface PgOptions {
  url: string;
  schema: string;
  max?: number;
  /** Reports connections lost while idle (once per interval during an outage). */
  logger?: Logger;
  /** How long a query waits for a free connection before failing (then 503); default 5 s. */
  connectTimeoutMs?: number;
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
  observePool(pool, { schema, pool: "main", max });
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
    if (!lazyPool) {
      lazyPool = newPool(LAZY_POOL_SIZE, "-c synchronous_commit=off");
      observePool(lazyPool, { schema, pool: "lazy", max: LAZY_POOL_SIZE });
    }
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
