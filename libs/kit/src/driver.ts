// What the Postgres and PGlite databases share: a driver seen as a deadline-checked Queryable,
// schema names, and int8 parsed as a number.
import { checkCallDeadline } from "./deadline.js";
import type { Queryable } from "./queryable.js";

/** What a driver (a pool, a client, a PGlite or its transaction) runs: a query's rows, a script. */
export interface Statements {
  rows(sql: string, params?: unknown[]): Promise<unknown[]>;
  script(sql: string): Promise<unknown>;
}

/**
 * The driver as a Queryable. Every statement first checks the deadline of the RPC it serves:
 * past it (or with the caller gone) the work stops with DeadlineExceeded rather than running on unseen.
 */
export function deadlineChecked(driver: Statements): Queryable {
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

const SCHEMA_NAME = /^[a-z][a-z0-9_]{0,62}$/;
export function checkSchema(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid schema name '${schema}'`);
  return schema;
}

// int8 as number: versions and counts stay far below 2^53, and both drivers then agree.
export const INT8_OID = 20;
