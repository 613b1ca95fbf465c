import type { Queryable, Row } from "@platform/kit/db";
import { type Keyed, keysetRows, type PageQuery, params, type SortKey } from "@platform/kit/keyset";
import { problem } from "@platform/kit/problems";
import { checkBlastChange, type StoredBlast } from "../domain/blast-metadata.js";
import type { Action } from "../domain/delivery.js";
import type { BlastMetadata, BlastRecord } from "../domain/model.js";
import { takeOrgTurns } from "./org-turns.js";
import { toBlast } from "./rows.js";
import { type ActivityRow, dailyActivity } from "./sent-email.store.js";
import { columnArrays } from "./unnest.js";

/** round_half_up(1000 × part / successful), as domain/rates.ts computes it. */
const rateSql = (part: string) =>
  `COALESCE((2000 * b.${part} + b.successful_sent) / NULLIF(2 * b.successful_sent, 0), 0)`;
const ENGAGEMENT_SQL = `((2 * ${rateSql("unique_opens")} + 3 * ${rateSql("unique_clicks")} + 5 * ${rateSql("unique_replies")} + 5) / 10)`;

/** Rates sort in integer tenths of a percent, exactly the one-decimal value shown. */
export const BLAST_SORT_KEYS: Record<string, SortKey> = {
  sentAt: { expr: "b.sent_at", type: "timestamptz", nullable: true },
  openRate: { expr: rateSql("unique_opens"), type: "int", nullable: false },
  clickRate: { expr: rateSql("unique_clicks"), type: "int", nullable: false },
  replyRate: { expr: rateSql("unique_replies"), type: "int", nullable: false },
  engagementScore: { expr: ENGAGEMENT_SQL, type: "int", nullable: false },
  recipientCount: { expr: "b.recipient_count", type: "int", nullable: false },
};

export interface BlastFilter {
  since: Date;
  ownerUserId: string;
}

export interface BlastTotals {
  totalBlasts: number;
  totalRecipients: number;
  successfulSent: number;
  uniqueOpens: number;
  uniqueClicks: number;
  uniqueReplies: number;
  totalOpens: number;
  totalClicks: number;
  totalReplies: number;
}

/** Email blasts: their metadata (from the sending system) and the counters ingestion keeps. */
export interface BlastStore {
  /**
   * Creates or replaces blast metadata, keeping the counters ingestion maintains (events may
   * come before the metadata). A blast is its org's row (org_id, id); the checks look at every
   * org's row of the id.
   */
  upsertBlasts(blasts: readonly BlastMetadata[], now: Date): Promise<number>;
  findBlast(orgId: string, id: string): Promise<BlastRecord | undefined>;
  /** Totals over the blasts sent since `since`. */
  blastTotals(orgId: string, f: BlastFilter): Promise<BlastTotals>;
  /** The blasts sent since `since`, best engagement first (ties: more recipients reached, then id). */
  topBlasts(orgId: string, f: BlastFilter, limit: number): Promise<BlastRecord[]>;
  /** Blasts sent since `since` and blasts not sent yet (no sentAt: drafts, scheduled, …). */
  listBlasts(orgId: string, f: BlastFilter & { search: string }, query: PageQuery): Promise<Keyed<BlastRecord>[]>;
  /** The blast's actions per day since `since`. */
  blastActivity(orgId: string, blastId: string, since: Date, actions: readonly Action[]): Promise<ActivityRow[]>;
}

const UNIQUE_VIOLATION = "23505";

async function upsertBlasts(q: Queryable, blasts: readonly BlastMetadata[], now: Date): Promise<number> {
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
        ...columnArrays(sorted, [
          "id",
          "orgId",
          "name",
          "templateName",
          "subject",
          "ownerUserId",
          "ownerDisplayName",
          "status",
          "sentAt",
          "recipientCount",
        ]),
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

export function blastStore(q: Queryable): BlastStore {
  const blastWhere = (orgId: string, f: BlastFilter, p: ReturnType<typeof params>) => {
    const where = [`b.org_id = ${p.add(orgId)}`, "b.described_at IS NOT NULL"];
    if (f.ownerUserId !== "") where.push(`b.owner_user_id = ${p.add(f.ownerUserId)}`);
    return where;
  };

  return {
    upsertBlasts: (blasts, now) => upsertBlasts(q, blasts, now),

    async findBlast(orgId: string, id: string): Promise<BlastRecord | undefined> {
      const [row] = await q.query(
        "SELECT * FROM analytics.blasts WHERE org_id = $1 AND id = $2 AND described_at IS NOT NULL",
        [orgId, id],
      );
      return row && toBlast(row);
    },

    async blastTotals(orgId: string, f: BlastFilter): Promise<BlastTotals> {
      const p = params();
      const where = [...blastWhere(orgId, f, p), `b.sent_at >= ${p.add(f.since)}`];
      const [r] = await q.query<Row>(
        `SELECT count(*) AS blasts, sum(recipient_count) AS recipients, sum(successful_sent) AS successful,
                sum(unique_opens) AS uo, sum(unique_clicks) AS uc, sum(unique_replies) AS ur,
                sum(total_opens) AS o, sum(total_clicks) AS c, sum(total_replies) AS r
           FROM analytics.blasts b WHERE ${where.join(" AND ")}`,
        p.values,
      );
      const n = (v: unknown) => Number(v ?? 0);
      return {
        totalBlasts: n(r?.blasts),
        totalRecipients: n(r?.recipients),
        successfulSent: n(r?.successful),
        uniqueOpens: n(r?.uo),
        uniqueClicks: n(r?.uc),
        uniqueReplies: n(r?.ur),
        totalOpens: n(r?.o),
        totalClicks: n(r?.c),
        totalReplies: n(r?.r),
      };
    },

    async topBlasts(orgId: string, f: BlastFilter, limit: number): Promise<BlastRecord[]> {
      const p = params();
      const where = [...blastWhere(orgId, f, p), `b.sent_at >= ${p.add(f.since)}`];
      const rows = await q.query(
        `SELECT b.* FROM analytics.blasts b WHERE ${where.join(" AND ")}
          ORDER BY ${ENGAGEMENT_SQL} DESC, b.successful_sent DESC, b.id LIMIT ${p.add(limit)}`,
        p.values,
      );
      return rows.map(toBlast);
    },

    async listBlasts(
      orgId: string,
      f: BlastFilter & { search: string },
      query: PageQuery,
    ): Promise<Keyed<BlastRecord>[]> {
      const p = params();
      const where = [...blastWhere(orgId, f, p), `(b.sent_at >= ${p.add(f.since)} OR b.sent_at IS NULL)`];
      if (f.search !== "") {
        const s = p.add(f.search);
        where.push(`(strpos(lower(b.name), ${s}) > 0 OR strpos(lower(b.template_name), ${s}) > 0)`);
      }
      return keysetRows(q, { columns: "b.*", from: "analytics.blasts b", where, idExpr: "b.id" }, query, p, toBlast);
    },

    blastActivity: (orgId, blastId, since, actions) =>
      dailyActivity(q, "blast_daily_activity", { org_id: orgId, blast_id: blastId }, since, actions),
  };
}
