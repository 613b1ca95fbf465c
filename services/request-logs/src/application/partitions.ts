import type { Db } from "@platform/kit/db";
import { dayOf } from "../domain/request-log.js";
import { partitionStore } from "../store/partitions.store.js";

/**
 * Creates the day partitions of `days` that this process has not seen yet. Serialised on an
 * advisory lock on Postgres: two replicas creating one partition at once would otherwise race
 * in the catalog (IF NOT EXISTS is not atomic). `known` remembers the days made, so a batch of
 * an existing day costs no statement.
 */
export async function ensurePartitions(db: Db, days: readonly Date[], known: Set<number>): Promise<void> {
  const missing = [...new Set(days.map((d) => dayOf(d).getTime()))].filter((t) => !known.has(t));
  if (missing.length === 0) return;
  await db.tx(async (q) => {
    if (db.kind === "pg") await q.query("SELECT pg_advisory_xact_lock(hashtext('request_logs.partitions'))");
    const store = partitionStore(q);
    for (const t of missing) await store.ensurePartition(new Date(t));
  });
  for (const t of missing) known.add(t);
}
