import type { Queryable, Row } from "@platform/kit/db";
import { type Keyed, keysetRows, type PageQuery, params, type SortKey } from "@platform/kit/keyset";
import type { Action, Delivery } from "../domain/delivery.js";
import type { SentEmailRecord } from "../domain/model.js";
import { toDelivery, toSentEmail } from "./rows.js";

// Every read is answered from the rollups, through an index on (org, sort key, id).

/** A rollup's sort key on a time (NULL until the first such action) or on a count. */
const at = (expr: string, nullable = true): SortKey => ({ expr, type: "timestamptz", nullable });
const count = (expr: string): SortKey => ({ expr, type: "int", nullable: false });

/** The sort keys both rollups share: they name their engagement columns alike (`alias` is the table's). */
const engagementKeys = (alias: string): Record<string, SortKey> => ({
  lastReplyAt: at(`${alias}.last_reply_at`),
  lastOpenAt: at(`${alias}.last_open_at`),
  replies: count(`${alias}.replies`),
  opens: count(`${alias}.opens`),
});

export const SENT_EMAIL_SORT_KEYS: Record<string, SortKey> = {
  ...engagementKeys("e"),
  sentAt: at("e.sent_at", false),
  lastClickAt: at("e.last_click_at"),
  clicks: count("e.clicks"),
};

/** Recipient rows of a sent email or a blast; ids are recipient emails (unique within the list). */
export const DELIVERY_SORT_KEYS: Record<string, SortKey> = { ...engagementKeys("d"), sentAt: at("d.sent_at") };

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

/** Sent emails, their recipients (deliveries) and the org's engagement over time. */
export interface SentEmailStore {
  /** Unique recipients successfully sent to since `since`, and how many of them opened, clicked, replied since. */
  recipientSummary(orgId: string, since: Date): Promise<RecipientSummary>;
  /** The org's actions per day since `since`. */
  orgActivity(orgId: string, since: Date, actions: readonly Action[]): Promise<ActivityRow[]>;
  /** One keyset page of the org's sent emails. */
  listSentEmails(orgId: string, query: SentEmailQuery): Promise<Keyed<SentEmailRecord>[]>;
  /** Only a sent email: one that only failed before sending, or has no SEND yet, is not found. */
  findSentEmail(orgId: string, id: string): Promise<SentEmailRecord | undefined>;
  /** The recipient rows of one sent email (`sentEmailId`) or of one blast (`blastId`). */
  listDeliveries(
    of: { sentEmailId: string } | { blastId: string; orgId: string },
    query: DeliveryQuery,
  ): Promise<Keyed<Delivery>[]>;
}

const ACTION_ORDER = "array_position(ARRAY['sends','opens','clicks','replies'], action)";

/**
 * The daily activity rows of `table` since `since`; `owner` is the row's key columns and
 * values (the org, and for a blast's activity the blast).
 */
export async function dailyActivity(
  q: Queryable,
  table: string,
  owner: Record<string, string>,
  since: Date,
  actions: readonly Action[],
): Promise<ActivityRow[]> {
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
}

export function sentEmailStore(q: Queryable): SentEmailStore {
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

  return {
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

    orgActivity: (orgId, since, actions) => dailyActivity(q, "daily_activity", { org_id: orgId }, since, actions),

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
      const source = { columns: "e.*", from: "analytics.sent_emails e", where, idExpr: "e.id" };
      const rows = await keysetRows(q, source, query, p, (r) => r);
      const recipients = await recipientsOf(rows.map(({ item }) => String(item.id)));
      return rows.map(({ item, position }) => ({
        item: toSentEmail(item, recipients.get(String(item.id)) ?? []),
        position,
      }));
    },

    async findSentEmail(orgId: string, id: string): Promise<SentEmailRecord | undefined> {
      const [row] = await q.query(
        "SELECT * FROM analytics.sent_emails WHERE org_id = $1 AND id = $2 AND sent_at IS NOT NULL",
        [orgId, id],
      );
      if (!row) return undefined;
      return toSentEmail(row, (await recipientsOf([id])).get(id) ?? []);
    },

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
      const idExpr = "(d.recipient_email || ' ' || d.sent_email_id)";
      return keysetRows(q, { columns: "d.*", from: "analytics.deliveries d", where, idExpr }, query, p, toDelivery);
    },
  };
}
