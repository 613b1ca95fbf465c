import type { Queryable } from "@platform/kit/db";

/**
 * Writers of one org's email data (Kafka partitions, the ingest RPC, blast metadata) take
 * turns on a transaction-scoped advisory lock per org, taken in org order. Every row they
 * write (events, sent emails, deliveries, rollups, blasts) belongs to those orgs, so two
 * writers never interleave on a row: no lost update and no deadlock, whatever order their
 * events come in. Other orgs write in parallel.
 */
export async function takeOrgTurns(q: Queryable, orgIds: readonly string[]): Promise<void> {
  for (const org of [...new Set(orgIds)].sort()) {
    await q.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`analytics:org:${org}`]);
  }
}
