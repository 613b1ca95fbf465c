// The embedded Postgres (PGlite): opening the shared instance, and a service's schema of it as a Db.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { PGlite, PGliteOptions, Transaction } from "@electric-sql/pglite";
import { checkCallDeadline } from "./deadline.js";
import { deferring, writeOnlyOver } from "./deferred-writes.js";
import { checkSchema, deadlineChecked, INT8_OID } from "./driver.js";
import type { Db, Queryable } from "./queryable.js";

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
  // (docs/benchmarks/rpc.md, "A getter per call, and PGlite loaded where nobody uses it").
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
