import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Db, Queryable } from "./db.js";

/** A folder of numbered SQL files (`001_init.sql`, …) applied in order, each once. */
export interface MigrationSource {
  /** Tracks the source's versions apart from others in the same schema. */
  name: string;
  dir: string;
}

/**
 * The `migrations/` folder beside the `src/` of the module at `moduleUrl` (its import.meta.url):
 * where the kit and every service keep their SQL files. A compiled bundle keeps its copies
 * elsewhere: `npm run build` (scripts/build.ts) passes their place relative to the bundle as
 * `bundled`; sources never pass it.
 */
export function migrationsBeside(name: string, moduleUrl: string, bundled?: string): MigrationSource {
  return { name, dir: fileURLToPath(new URL(bundled ?? "../migrations", moduleUrl)) };
}

/** The kit's own tables (outbox, idempotency records, processed events) that every service gets. */
export const kitMigrations: MigrationSource = migrationsBeside("kit", import.meta.url);

interface MigrationFile {
  version: number;
  name: string;
  path: string;
}

function listMigrations(dir: string): MigrationFile[] {
  return readdirSync(dir)
    .filter((f) => /^\d+_[\w-]+\.sql$/.test(f))
    .map((f) => ({ version: Number.parseInt(f, 10), name: f, path: join(dir, f) }))
    .sort((a, b) => a.version - b.version);
}

/**
 * Applies pending migrations, each in its own transaction with its bookkeeping row.
 * `{{schema}}` in a file stands for the service's schema. Concurrent runners on Postgres
 * serialise on an advisory lock, so two replicas starting together apply each file once.
 */
export async function migrate(db: Db, sources: MigrationSource[]): Promise<string[]> {
  const s = db.schema;
  // Even IF NOT EXISTS races between replicas, so the bootstrap takes the lock too.
  const lock = async (q: Queryable) => {
    if (db.kind === "pg") await q.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`migrate:${s}`]);
  };
  await db.tx(async (q) => {
    await lock(q);
    await q.exec(`CREATE SCHEMA IF NOT EXISTS ${s};
      CREATE TABLE IF NOT EXISTS ${s}.schema_migrations (
        source text NOT NULL, version int NOT NULL, name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (source, version))`);
  });
  const applied: string[] = [];
  for (const source of sources) {
    for (const file of listMigrations(source.dir)) {
      const did = await db.tx(async (q) => {
        await lock(q);
        const done = await q.query(`SELECT 1 FROM ${s}.schema_migrations WHERE source = $1 AND version = $2`, [
          source.name,
          file.version,
        ]);
        if (done.length > 0) return false;
        await q.exec(readFileSync(file.path, "utf8").replaceAll("{{schema}}", s));
        await q.query(`INSERT INTO ${s}.schema_migrations (source, version, name) VALUES ($1, $2, $3)`, [
          source.name,
          file.version,
          file.name,
        ]);
        return true;
      });
      if (did) applied.push(`${source.name}/${file.name}`);
    }
  }
  return applied;
}
