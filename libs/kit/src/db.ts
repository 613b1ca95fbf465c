// The kit's database door: what services and stores import. Each part lives in its own module:
// the interfaces (queryable.ts), Postgres (pg.ts), PGlite (pglite.ts), deferred writes
// (deferred-writes.ts), prepared-statement naming (prepared-statements.ts) and failure kinds
// (db-failures.ts).
export { isDatabaseUnavailable, isStatementTimeout } from "./db-failures.js";
export { combineWrites } from "./deferred-writes.js";
export { ensureDatabase, openPg, type PgOptions } from "./pg.js";
export { openPglite, PGLITE_TEMPLATE_ENV, pgliteDb } from "./pglite.js";
export { PLANNED_EACH_TIME } from "./prepared-statements.js";
export { type Db, dateOrNull, type Queryable, type Row, type TxOptions, textOrNull } from "./queryable.js";
