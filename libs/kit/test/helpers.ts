import { randomBytes } from "node:crypto";
import pg from "pg";
import { pino } from "pino";
import { afterAll, beforeAll, beforeEach } from "vitest";
import { type Db, openPglite, pgliteDb } from "../src/db.js";
import type { Logger } from "../src/logger.js";
import { kitMigrations, migrate } from "../src/migrate.js";

export const silentLogger: Logger = pino({ level: "silent" });

/**
 * One in-memory PGlite per test file (starting one takes a second); each `fresh()` is a new
 * schema with the kit's tables, so tests do not see each other's rows.
 */
export async function kitPglite(): Promise<{ fresh(): Promise<Db>; close(): Promise<void> }> {
  const instance = await openPglite();
  let n = 0;
  return {
    async fresh() {
      const db = pgliteDb(instance, `kit_test_${++n}`);
      await migrate(db, [kitMigrations]);
      return db;
    },
    close: () => instance.close(),
  };
}

/**
 * Registers, in the calling file or describe, one kitPglite for all its tests and a fresh
 * schema before each, handed to `use` (before the caller's own beforeEach runs).
 */
export function freshKitDbEachTest(use: (db: Db) => void): void {
  let pglite: Awaited<ReturnType<typeof kitPglite>>;
  beforeAll(async () => {
    pglite = await kitPglite();
  });
  afterAll(async () => {
    await pglite.close();
  });
  beforeEach(async () => {
    use(await pglite.fresh());
  });
}

/** Rejects when `promise` has not settled within `ms`, naming what was awaited. */
export function within<T>(what: string, promise: Promise<T>, ms = 10_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export { eventually } from "../test-support/testing.js";

/** A database of its own on the real Postgres (POSTGRES_URL), dropped by `drop()`. */
export async function throwawayDatabase(prefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = process.env.POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const name = `${prefix}_${randomBytes(4).toString("hex")}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
