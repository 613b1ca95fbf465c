import { PGlite } from "@electric-sql/pglite";
import { btree_gist } from "@electric-sql/pglite/contrib/btree_gist";
import pg from "pg";
import type { Logger } from "./logger.js";

export type Row = Record<string, unknown>;

/** What a handler or store needs: parameterised queries, plus multi-statement scripts. */
export interface Queryable {
  query<T = Row>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

/**
 * A service's database: Postgres over `pg`, or a schema of the embedded PGlite. SQL is
 * the same for both; tables live in the service's own schema (`db.schema`).
 */
export interface Db extends Queryable {
  readonly schema: string;
  readonly kind: "pg" | "pglite";
  /** One transaction: committed when `fn` resolves, rolled back when it throws. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
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
}

export function openPg({ url, schema, max = 10 }: PgOptions): Db {
  checkSchema(schema);
  const types = {
    getTypeParser: (oid: number, format?: "text" | "binary") =>
      oid === INT8_OID ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format),
  };
  const pool = new pg.Pool({ connectionString: url, max, types: types as pg.CustomTypesConfig });
  // An idle client's error (server restart) must not crash the process; the pool replaces it.
  pool.on("error", () => {});
  const on = (client: pg.Pool | pg.PoolClient): Queryable => ({
    query: async <T>(sql: string, params?: unknown[]) => (await client.query(sql, params as unknown[])).rows as T[],
    exec: async (sql: string) => {
      await client.query(sql);
    },
  });
  const root = on(pool);
  return {
    schema,
    kind: "pg",
    query: root.query,
    exec: root.exec,
    async tx(fn) {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const result = await fn(on(client));
        await client.query("COMMIT");
        return result;
      } catch (err) {
        await client.query("ROLLBACK").catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

/** Opens the embedded Postgres: a directory keeps data across restarts, none keeps it in memory. */
export async function openPglite(dataDir?: string): Promise<PGlite> {
  return PGlite.create({
    ...(dataDir ? { dataDir } : {}),
    extensions: { btree_gist },
    parsers: { [INT8_OID]: (v: string) => Number(v) },
  });
}

/** A service's view of the shared embedded instance: its own schema, closed by the owner of the instance. */
export function pgliteDb(instance: PGlite, schema: string): Db {
  checkSchema(schema);
  return {
    schema,
    kind: "pglite",
    query: async <T>(sql: string, params?: unknown[]) => (await instance.query<T>(sql, params)).rows,
    exec: async (sql: string) => {
      await instance.exec(sql);
    },
    tx: (fn) =>
      instance.transaction((t) =>
        fn({
          query: async <T>(sql: string, params?: unknown[]) => (await t.query<T>(sql, params)).rows,
          exec: async (sql: string) => {
            await t.exec(sql);
          },
        }),
      ),
    close: async () => {},
  };
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
