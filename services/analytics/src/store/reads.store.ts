import type { Queryable, Row } from "@platform/kit/db";
import { type Keyed, keyset, type PageQuery, params, positionValue, type SortKey } from "@platform/kit/keyset";
import type { Action, Delivery } from "../domain/delivery.js";
import type { BlastRecord, SentEmailRecord } from "../model.js";
import { toBlast, toDelivery, toSentEmail } from "./rows.js";

// Every read is answered from the rollups, through an index on (org, sort key, id).

/** round_half_up(1000 × part / successful), as domain/rates.ts computes it. */
const rateSql = (part: string) =>
  `COALESCE((2000 * b.${part} + b.successful_sent) / NULLIF(2 * b.successful_sent, 0), 0)`;
const ENGAGEMENT_SQL = `((2 * ${rateSql("unique_opens")} + 3 * ${rateSql("unique_clicks")} + 5 * ${rateSql("unique_replies")} + 5) / 10)`;

export const SENT_EMAIL_SORT_KEYS: Record<string, SortKey> = {
  sentAt: { expr: "e.sent_at", type: "timestamptz", nullable: false },
  lastReplyAt: { expr: "e.last_reply_at", type: "timestamptz", nullable: true },
  lastOpenAt: { expr: "e.last_open_at", type: "timestamptz", nullable: true },
  lastClickAt: { expr: "e.last_click_at", type: "timestamptz", nullable: true },
  replies: { expr: "e.replies", type: "int", nullable: false },
  opens: { expr: "e.opens", type: "int", nullable: false },
  clicks: { expr: "e.clicks", type: "int", nullable: false },
};

/** Recipient rows of a sent email or a blast; ids are recipient emails (unique within the list). */
export const DELIVERY_SORT_KEYS: Record<string, SortKey> = {
  lastReplyAt: { expr: "d.last_reply_at", type: "timestamptz", nullable: true },
  lastOpenAt: { expr: "d.last_open_at", type: "timestamptz", nullable: true },
  replies: { expr: "d.replies", type: "int", nullable: false },
  opens: { expr: "d.opens", type: "int", nullable: false },
  sentAt: { expr: "d.sent_at", type: "timestamptz", nullable: true },
};

/** Rates sort in integer tenths of a percent, exactly the one-decimal value shown. */
export const BLAST_SORT_KEYS: Record<string, SortKey> = {
  sentAt: { expr: "b.sent_at", type: "timestamptz", nullable: true },
  openRate: { expr: rateSql("unique_opens"), type: "int", nullable: false },
  clickRate: { expr: rateSql("unique_clicks"), type: "int", nullable: false },
  replyRate: { expr: rateSql("unique_replies"), type: "int", nullable: false },
  engagementScore: { expr: ENGAGEMENT_SQL, type: "int", nullable: false },
  recipientCount: { expr: "b.recipient_count", type: "int", nullable: false },
};

export interface RecipientSummary {
  totalSent: number;
  hadOpened: number;
  hadClicked: number;
  hadReplied: number;
}

export interface ActivityRow {
  date: string;
  action: Action;
  count: number;
}

export interface SentEmailQuery extends PageQuery {
  since: Date;
  /** Lower-case substring of the subject or a recipient; empty for any. */
  search: string;
  emailType: "standard" | "email-blast" | "all";
}

export interface DeliveryQuery extends PageQuery {
  hasReplied: boolean | undefined;
  search: string;
}

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

const ACTION_ORDER = "array_position(ARRAY['sends','opens','clicks','replies'], action)";

export function analyticsReads(q: Queryable) {
  const recipientsOf = async (ids: string[]): Promise<Map<string, string[]>> => {
    const rows = await q.query<{ sent_email_id: string; recipient_email: string }>(
      `SELECT sent_email_id, recipient_email FROM analytics.deliveries
        WHERE sent_email_id = ANY($1::text[]) ORDER BY sent_email_id, recipient_email`,
      [ids],
    );
    const map = new Map<string, string[]>(ids.map((id) => [id, []]));
    for (const r of rows) map.get(r.sent_email_id)?.push(r.recipient_email);
    return map;
  };

  /** `owner`: the row's key columns and values (the org, and for a blast's activity the blast). */
  const activity = async (table: string, owner: Record<string, string>, since: Date, actions: readonly Action[]) => {
    const p = params();
    const where = Object.entries(owner).map(([column, value]) => `${column} = ${p.add(value)}`);
    const rows = await q.query<{ day: string; action: Action; count: number }>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, action, count FROM analytics.${table}
        WHERE ${where.join(" AND ")} AND day >= ${p.add(since.toISOString().slice(0, 10))}::date
          AND action = ANY(${p.add(actions)}::text[]) AND count > 0
        ORDER BY day, ${ACTION_ORDER}`,
      p.values,
    );
    return rows.map((r): ActivityRow => ({ date: r.day, action: r.action, count: Number(r.count) }));
  };

  const blastWhere = (orgId: string, f: BlastFilter, p: ReturnType<typeof params>) => {
    const where = [`b.org_id = ${p.add(orgId)}`, "b.described_at IS NOT NULL"];
    if (f.ownerUserId !== "") where.push(`b.owner_user_id = ${p.add(f.ownerUserId)}`);
    return where;
  };

  return {
    /** Unique recipients successfully sent to since `since`, and how many of them opened, clicked, replied since. */
    async recipientSummary(orgId: string, since: Date): Promise<RecipientSummary> {
      // From the per-day rollup (migration 003), never the recipients themselves: at most four
      // rows per day of the period, however many recipients or events there are. A period
      // starts at a UTC midnight, so "at or after since" is "on or after its day".
      const day = since.toISOString().slice(0, 10);
      const [r] = await q.query<Row>(
        `SELECT COALESCE(sum(recipients) FILTER (WHERE signal = 'sent'), 0) AS total_sent,
                COALESCE(sum(recipients) FILTER (WHERE signal = 'open'), 0) AS had_opened,
                COALESCE(sum(recipients) FILTER (WHERE signal = 'click'), 0) AS had_clicked,
                COALESCE(sum(recipients) FILTER (WHERE signal = 'reply'), 0) AS had_replied
           FROM analytics.recipient_days WHERE org_id = $1 AND day >= $2::date`,
        [orgId, day],
      );
      return {
        totalSent: Number(r?.total_sent ?? 0),
        hadOpened: Number(r?.had_opened ?? 0),
        hadClicked: Number(r?.had_clicked ?? 0),
        hadReplied: Number(r?.had_replied ?? 0),
      };
    },

    orgActivity: (orgId: string, since: Date, actions: readonly Action[]) =>
      activity("daily_activity", { org_id: orgId }, since, actions),

    blastActivity: (orgId: string, blastId: string, since: Date, actions: readonly Action[]) =>
      activity("blast_daily_activity", { org_id: orgId, blast_id: blastId }, since, actions),

    async listSentEmails(orgId: string, query: SentEmailQuery): Promise<Keyed<SentEmailRecord>[]> {
      const p = params();
      // An email none of whose deliveries went out has no sent_at, so the period leaves it out.
      const where = [`e.org_id = ${p.add(orgId)}`, `e.sent_at >= ${p.add(query.since)}`];
      if (query.emailType === "standard") where.push("e.blast_id IS NULL");
      if (query.emailType === "email-blast") where.push("e.blast_id IS NOT NULL");
      if (query.search !== "") {
        // strpos, not LIKE: a search for "%" or "_" means those characters.
        const s = p.add(query.search);
        where.push(`(strpos(lower(e.subject), ${s}) > 0 OR EXISTS (SELECT 1 FROM analytics.deliveries d
          WHERE d.sent_email_id = e.id AND strpos(d.recipient_email, ${s}) > 0))`);
      }
      const page = keyset(query.sort.key, "e.id", query.sort.descending, query.after, p);
      const rows = await q.query(
        `SELECT e.*, ${query.sort.key.expr} AS sort_value FROM analytics.sent_emails e
          WHERE ${[...where, page.where].join(" AND ")} ORDER BY ${page.orderBy} LIMIT ${p.add(query.limit)}`,
        p.values,
      );
      const recipients = await recipientsOf(rows.map((r) => String(r.id)));
      return rows.map((r) => ({
        item: toSentEmail(r, recipients.get(String(r.id)) ?? []),
        position: [positionValue(r.sort_value), String(r.id)],
      }));
    },

    /** Only a sent email: one that only failed before sending, or has no SEND yet, is not found. */
    async findSentEmail(orgId: string, id: string): Promise<SentEmailRecord | undefined> {
      const [row] = await q.query(
        "SELECT * FROM analytics.sent_emails WHERE org_id = $1 AND id = $2 AND sent_at IS NOT NULL",
        [orgId, id],
      );
      if (!row) return undefined;
      return toSentEmail(row, (await recipientsOf([id])).get(id) ?? []);
    },

    /** The recipient rows of one sent email (`sentEmailId`) or of one blast (`blastId`). */
    async listDeliveries(
      of: { sentEmailId: string } | { blastId: string; orgId: string },
      query: DeliveryQuery,
    ): Promise<Keyed<Delivery>[]> {
      const p = params();
      const where =
        "sentEmailId" in of
          ? [`d.sent_email_id = ${p.add(of.sentEmailId)}`]
          : [`d.blast_id = ${p.add(of.blastId)}`, `d.org_id = ${p.add(of.orgId)}`];
      if (query.hasReplied === true) where.push("d.replies > 0");
      if (query.hasReplied === false) where.push("d.replies = 0");
      if (query.search !== "") where.push(`strpos(d.recipient_email, ${p.add(query.search)}) > 0`);
      // Within a blast a recipient may have had several emails; the id that breaks ties must be unique.
      const page = keyset(
        query.sort.key,
        "(d.recipient_email || ' ' || d.sent_email_id)",
        query.sort.descending,
        query.after,
        p,
      );
      const rows = await q.query(
        `SELECT d.*, ${query.sort.key.expr} AS sort_value, (d.recipient_email || ' ' || d.sent_email_id) AS row_id
           FROM analytics.deliveries d
          WHERE ${[...where, page.where].join(" AND ")} ORDER BY ${page.orderBy} LIMIT ${p.add(query.limit)}`,
        p.values,
      );
      return rows.map((r) => ({ item: toDelivery(r), position: [positionValue(r.sort_value), String(r.row_id)] }));
    },

    async findBlast(orgId: string, id: string): Promise<BlastRecord | undefined> {
      const [row] = await q.query(
        "SELECT * FROM analytics.blasts WHERE org_id = $1 AND id = $2 AND described_at IS NOT NULL",
        [orgId, id],
      );
      return row && toBlast(row);
    },

    /** Totals over the blasts sent since `since`. */
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

    /** The blasts sent since `since`, best engagement first (ties: more recipients reached, then id). */
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

    /** Blasts sent since `since` and blasts not sent yet (no sentAt: drafts, scheduled, …). */
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
      const page = keyset(query.sort.key, "b.id", query.sort.descending, query.after, p);
      const rows = await q.query(
        `SELECT b.*, ${query.sort.key.expr} AS sort_value FROM analytics.blasts b
          WHERE ${[...where, page.where].join(" AND ")} ORDER BY ${page.orderBy} LIMIT ${p.add(query.limit)}`,
        p.values,
      );
      return rows.map((r) => ({ item: toBlast(r), position: [positionValue(r.sort_value), String(r.id)] }));
    },
  };
}

export type AnalyticsReads = ReturnType<typeof analyticsReads>;
