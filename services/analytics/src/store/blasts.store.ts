import type { Queryable } from "@platform/kit/db";
import { checkBlastChange } from "../domain/blast-metadata.js";
import type { BlastMetadata } from "../model.js";
import { takeOrgTurns } from "./org-turns.js";

/**
 * Creates or replaces blast metadata, keeping the counters ingestion maintains (events may
 * come before the metadata). Its checks run on the locked rows.
 */
export async function upsertBlasts(q: Queryable, blasts: readonly BlastMetadata[], now: Date): Promise<number> {
  await takeOrgTurns(
    q,
    blasts.map((b) => b.orgId),
  );
  const sorted = [...blasts].sort((a, b) => (a.id < b.id ? -1 : 1));
  const stored = await q.query<{ id: string; org_id: string; status: string | null }>(
    "SELECT id, org_id, status FROM analytics.blasts WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE",
    [sorted.map((b) => b.id)],
  );
  const byId = new Map(stored.map((r) => [r.id, { orgId: r.org_id, status: r.status }]));
  for (const b of sorted) checkBlastChange(byId.get(b.id), b);
  const rows = await q.query<{ id: string }>(
    `INSERT INTO analytics.blasts AS t (id, org_id, name, template_name, subject, owner_user_id, owner_display_name,
        status, sent_at, recipient_count, described_at)
     SELECT c.*, $11::timestamptz FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
        $7::text[], $8::text[], $9::timestamptz[], $10::int[]) AS c
     ON CONFLICT (id) DO UPDATE SET
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
}
