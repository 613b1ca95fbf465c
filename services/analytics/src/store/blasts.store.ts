import type { Queryable } from "@platform/kit/db";
import { problem } from "@platform/kit/problems";
import { checkBlastChange, type StoredBlast } from "../domain/blast-metadata.js";
import type { BlastMetadata } from "../model.js";
import { takeOrgTurns } from "./org-turns.js";

const UNIQUE_VIOLATION = "23505";

/**
 * Creates or replaces blast metadata, keeping the counters ingestion maintains (events may
 * come before the metadata). A blast is its org's row (org_id, id); the checks look at every
 * org's row of the id.
 */
export async function upsertBlasts(q: Queryable, blasts: readonly BlastMetadata[], now: Date): Promise<number> {
  await takeOrgTurns(
    q,
    blasts.map((b) => b.orgId),
  );
  const sorted = [...blasts].sort((a, b) => (a.id < b.id ? -1 : 1));
  // The caller's own rows cannot change under it (its org's writers take turns); another org
  // describing the same id concurrently is caught by the unique index below.
  const stored = await q.query<{ id: string; org_id: string; status: string | null; described: boolean }>(
    `SELECT id, org_id, status, described_at IS NOT NULL AS described FROM analytics.blasts
      WHERE id = ANY($1::text[])`,
    [sorted.map((b) => b.id)],
  );
  const byId = new Map<string, StoredBlast[]>();
  for (const r of stored) {
    const rows = byId.get(r.id) ?? [];
    rows.push({ orgId: r.org_id, status: r.status, described: r.described });
    byId.set(r.id, rows);
  }
  for (const b of sorted) checkBlastChange(byId.get(b.id) ?? [], b);
  try {
    const rows = await q.query<{ id: string }>(
      `INSERT INTO analytics.blasts AS t (id, org_id, name, template_name, subject, owner_user_id, owner_display_name,
          status, sent_at, recipient_count, described_at)
       SELECT c.*, $11::timestamptz FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
          $7::text[], $8::text[], $9::timestamptz[], $10::int[]) AS c
       ON CONFLICT (org_id, id) DO UPDATE SET
          name = excluded.name, template_name = excluded.template_name, subject = excluded.subject,
          owner_user_id = excluded.owner_user_id, owner_display_name = excluded.owner_display_name,
          status = excluded.status, sent_at = excluded.sent_at, recipient_count = excluded.recipient_count,
          described_at = excluded.described_at
       RETURNING id`,
      [
        sorted.map((b) => b.id),
        sorted.map((b) => b.orgId),
        sorted.map((b) => b.name),
        sorted.map((b) => b.templateName),
        sorted.map((b) => b.subject),
        sorted.map((b) => b.ownerUserId),
        sorted.map((b) => b.ownerDisplayName),
        sorted.map((b) => b.status),
        sorted.map((b) => b.sentAt?.toISOString() ?? null),
        sorted.map((b) => b.recipientCount),
        now,
      ],
    );
    return rows.length;
  } catch (err) {
    const e = err as { code?: string; constraint?: string };
    if (e.code === UNIQUE_VIOLATION && e.constraint === "blasts_described_id") {
      throw problem("invalid-field", "A blast of the request was described by another organization meanwhile.", {
        field: "orgId",
      });
    }
    throw err;
  }
}
