import type { Db, Queryable } from "@platform/kit/db";
import { type Keyed, keyset, type PageQuery, params, positionValue, type SortKey } from "@platform/kit/keyset";
import { enqueueEvent, type OutboxEvent } from "@platform/kit/outbox";
import { problem } from "@platform/kit/problems";
import type { DealSchemaRecord } from "../domain/deal-schema.js";
import type { InsightType } from "../domain/insight-types.js";
import type { QnaState } from "../domain/qna-state.js";
import type { DealRecord, InsightItemRecord, InsightRecordRow, MeetingRecord, QnaRecord } from "../model.js";
import {
  dealColumns,
  insertSql,
  qnaColumns,
  toDeal,
  toInsightRecord,
  toMeeting,
  toQna,
  toSchema,
  updateSql,
} from "./rows.js";

/** The sort keys of GET /deals. Amounts sort by value whatever their currency, as fixed-width text. */
export const DEAL_SORT_KEYS: Record<string, SortKey> = {
  updatedAt: { expr: "d.updated_at", type: "timestamptz", nullable: false },
  createdAt: { expr: "d.created_at", type: "timestamptz", nullable: false },
  name: { expr: "lower(d.name)", type: "text", nullable: false },
  closeDate: { expr: `(to_char(d.close_date, 'YYYY-MM-DD') COLLATE "C")`, type: "text", nullable: true },
  amount: {
    expr: `(to_char(d.amount_value, 'FM000000000000000000.000000') COLLATE "C")`,
    type: "text",
    nullable: true,
  },
};

/** The sort key of GET /deals/{id}/meetings. */
export const MEETING_SORT_KEYS: Record<string, SortKey> = {
  startTime: { expr: "m.start_time", type: "timestamptz", nullable: false },
};

export interface DealListFilter {
  search: string;
  accountId: string;
  stages: readonly string[];
  ownerUserId: string;
  closingBefore: string;
  closingAfter: string;
}

/** One bucket of a backlog: the full count and the first items. */
export interface Bucket {
  count: number;
  items: QnaRecord[];
}

export type Backlog = Record<QnaRecord["direction"], Record<QnaState, Bucket>>;

/** Items per backlog bucket (the spec's limit). */
export const BUCKET_ITEMS = 25;

const DEAL_SELECT = `SELECT d.*, to_char(d.close_date, 'YYYY-MM-DD') AS close_date_text FROM revenue.deals d`;
const UNIQUE_VIOLATION = "23505";

/** The CRM-reference guard fired: another deal of the org (perhaps committed a moment ago) has the id. */
function sourceRefConflictOn<T>(write: Promise<T>, crmId: string | undefined): Promise<T> {
  return write.catch((err: unknown) => {
    const e = err as { code?: string; constraint?: string; message?: string };
    if (e.code === UNIQUE_VIOLATION && `${e.constraint ?? ""}${e.message ?? ""}`.includes("deals_crm_source")) {
      throw problem("source-ref-conflict", `Another deal already has sourceRefs.crm.id '${crmId}'.`, {
        sourceType: "crm",
        sourceId: crmId,
      });
    }
    throw err;
  });
}

const DEAL_CASTS = { custom_fields: "jsonb" };
const QNA_CASTS = { answer: "jsonb", occurrences: "jsonb" };

/** Every query of the revenue service, on a plain queryable or inside a transaction. */
export function revenueQueries(q: Queryable) {
  const one = async <T>(sql: string, values: unknown[], map: (r: Record<string, unknown>) => T) => {
    const [row] = await q.query(sql, values);
    return row ? map(row) : undefined;
  };
  return {
    // Schemas.
    findSchema: (orgId: string, id: string) =>
      one("SELECT * FROM revenue.deal_schemas WHERE org_id = $1 AND id = $2", [orgId, id], toSchema),
    defaultSchema: (orgId: string) =>
      one("SELECT * FROM revenue.deal_schemas WHERE org_id = $1 AND is_default", [orgId], toSchema),
    findSchemaById: (id: string) => one("SELECT * FROM revenue.deal_schemas WHERE id = $1", [id], toSchema),
    async listSchemas(orgId: string): Promise<DealSchemaRecord[]> {
      const rows = await q.query(
        "SELECT * FROM revenue.deal_schemas WHERE org_id = $1 ORDER BY is_default DESC, created_at, id",
        [orgId],
      );
      return rows.map(toSchema);
    },
    async insertSchema(s: DealSchemaRecord): Promise<void> {
      await q.query(
        `INSERT INTO revenue.deal_schemas (id, org_id, name, is_default, version, stages, custom_fields, insight_fields,
           created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8::jsonb, $9, $10)`,
        [
          s.id,
          s.orgId,
          s.name,
          s.isDefault,
          s.version,
          JSON.stringify(s.stages),
          JSON.stringify(s.customFields),
          JSON.stringify(s.insightFields),
          s.createdAt,
          s.updatedAt,
        ],
      );
    },

    // Deals.
    findDeal: (orgId: string, id: string) =>
      one(`${DEAL_SELECT} WHERE d.org_id = $1 AND d.id = $2`, [orgId, id], toDeal),
    /** The deal row-locked until the transaction ends, so writes to one deal run one at a time. */
    lockDeal: (orgId: string, id: string) =>
      one(`${DEAL_SELECT} WHERE d.org_id = $1 AND d.id = $2 FOR UPDATE`, [orgId, id], toDeal),
    findDealByCrmId: (orgId: string, crmId: string) =>
      one(`${DEAL_SELECT} WHERE d.org_id = $1 AND d.crm_source_id = $2`, [orgId, crmId], toDeal),
    async listDeals(orgId: string, filter: DealListFilter, page: PageQuery): Promise<Keyed<DealRecord>[]> {
      const p = params();
      const where = [`d.org_id = ${p.add(orgId)}`];
      if (filter.search) where.push(`strpos(lower(d.name), lower(${p.add(filter.search)})) > 0`);
      if (filter.accountId) where.push(`d.account_id = ${p.add(filter.accountId)}`);
      if (filter.stages.length > 0) where.push(`d.stage = ANY(${p.add(filter.stages)}::text[])`);
      if (filter.ownerUserId) where.push(`d.owner_user_id = ${p.add(filter.ownerUserId)}`);
      if (filter.closingBefore) where.push(`d.close_date <= ${p.add(filter.closingBefore)}::date`);
      if (filter.closingAfter) where.push(`d.close_date >= ${p.add(filter.closingAfter)}::date`);
      const ks = keyset(page.sort.key, "d.id", page.sort.descending, page.after, p);
      const rows = await q.query(
        `SELECT d.*, to_char(d.close_date, 'YYYY-MM-DD') AS close_date_text, ${page.sort.key.expr} AS sort_value
         FROM revenue.deals d WHERE ${where.join(" AND ")} AND ${ks.where}
         ORDER BY ${ks.orderBy} LIMIT ${p.add(page.limit)}`,
        p.values,
      );
      return rows.map((r) => ({ item: toDeal(r), position: [positionValue(r.sort_value), String(r.id)] }));
    },
    async insertDeal(d: DealRecord): Promise<void> {
      const { sql, values } = insertSql("revenue.deals", dealColumns(d), DEAL_CASTS);
      await sourceRefConflictOn(q.query(sql, values), d.crm?.id);
    },
    async updateDeal(d: DealRecord): Promise<void> {
      const { sql, values } = updateSql("revenue.deals", dealColumns(d), ["org_id", "id"], DEAL_CASTS);
      await sourceRefConflictOn(q.query(sql, values), d.crm?.id);
    },

    // Q&As.
    findQna: (orgId: string, id: string) =>
      one("SELECT * FROM revenue.qnas WHERE org_id = $1 AND id = $2", [orgId, id], toQna),
    lockQna: (orgId: string, id: string) =>
      one("SELECT * FROM revenue.qnas WHERE org_id = $1 AND id = $2 FOR UPDATE", [orgId, id], toQna),
    async insertQna(item: QnaRecord): Promise<void> {
      const { sql, values } = insertSql("revenue.qnas", qnaColumns(item), QNA_CASTS);
      await q.query(sql, values);
    },
    async updateQna(item: QnaRecord): Promise<void> {
      const { sql, values } = updateSql("revenue.qnas", qnaColumns(item), ["org_id", "id"], QNA_CASTS);
      await q.query(sql, values);
    },
    /** Open discovery items of the deal linked to the 8P field, locked for the auto-close. */
    async lockOpenLinkedQnas(dealId: string, schemaType: InsightType, fieldKey: string): Promise<QnaRecord[]> {
      const rows = await q.query(
        `SELECT * FROM revenue.qnas WHERE deal_id = $1 AND direction = 'discovery' AND state = 'open'
           AND linked_schema_type = $2 AND linked_field_key = $3 ORDER BY id FOR UPDATE`,
        [dealId, schemaType, fieldKey],
      );
      return rows.map(toQna);
    },
    /** The six buckets: full counts, and the most recently updated items of each. */
    async backlog(dealId: string, meetingId: string | undefined): Promise<Backlog> {
      const filter = meetingId ? `AND occurrences @> jsonb_build_array(jsonb_build_object('meetingId', $2::text))` : "";
      const values = meetingId ? [dealId, meetingId] : [dealId];
      const counts = await q.query<{ direction: string; state: string; n: number }>(
        `SELECT direction, state, count(*)::int AS n FROM revenue.qnas WHERE deal_id = $1 ${filter} GROUP BY 1, 2`,
        values,
      );
      const items = await q.query(
        `SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY direction, state ORDER BY updated_at DESC, id DESC) AS rn
           FROM revenue.qnas WHERE deal_id = $1 ${filter}) t WHERE rn <= ${BUCKET_ITEMS}
         ORDER BY updated_at DESC, id DESC`,
        values,
      );
      const empty = (): Record<QnaState, Bucket> => ({
        open: { count: 0, items: [] },
        answered: { count: 0, items: [] },
        dismissed: { count: 0, items: [] },
      });
      const backlog: Backlog = { discovery: empty(), rfi: empty() };
      for (const c of counts) backlog[c.direction as QnaRecord["direction"]][c.state as QnaState].count = c.n;
      for (const r of items) {
        const item = toQna(r);
        backlog[item.direction][item.state].items.push(item);
      }
      return backlog;
    },

    // 8P records.
    findInsight: (orgId: string, id: string) =>
      one("SELECT * FROM revenue.insight_records WHERE org_id = $1 AND id = $2", [orgId, id], toInsightRecord),
    findDealInsight: (dealId: string, type: InsightType) =>
      one(
        "SELECT * FROM revenue.insight_records WHERE deal_id = $1 AND schema_type = $2",
        [dealId, type],
        toInsightRecord,
      ),
    lockDealInsight: (dealId: string, type: InsightType) =>
      one(
        "SELECT * FROM revenue.insight_records WHERE deal_id = $1 AND schema_type = $2 FOR UPDATE",
        [dealId, type],
        toInsightRecord,
      ),
    async listDealInsights(dealId: string): Promise<InsightRecordRow[]> {
      const rows = await q.query("SELECT * FROM revenue.insight_records WHERE deal_id = $1", [dealId]);
      return rows.map(toInsightRecord);
    },
    /** Inserts the record unless the deal has one of its type; true when inserted. */
    async insertInsightIfAbsent(r: InsightRecordRow): Promise<boolean> {
      const rows = await q.query(
        `INSERT INTO revenue.insight_records (id, org_id, deal_id, schema_type, schema_id, schema_version, fields,
           created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9)
         ON CONFLICT (deal_id, schema_type) DO NOTHING RETURNING id`,
        [
          r.id,
          r.orgId,
          r.dealId,
          r.schemaType,
          r.schemaId,
          r.schemaVersion,
          JSON.stringify(r.fields),
          r.createdAt,
          r.updatedAt,
        ],
      );
      return rows.length > 0;
    },
    /** Appends at the end of the field's array: items are never rewritten or reordered. */
    async appendInsightItem(id: string, fieldKey: string, item: InsightItemRecord, at: Date): Promise<void> {
      await q.query(
        `UPDATE revenue.insight_records
         SET fields = jsonb_set(fields, ARRAY[$2::text], COALESCE(fields -> $2::text, '[]'::jsonb) || jsonb_build_array($3::jsonb)),
             updated_at = $4
         WHERE id = $1`,
        [id, fieldKey, JSON.stringify(item), at],
      );
    },

    // Meetings (projection), previews included.
    findMeeting: (orgId: string, id: string) =>
      one("SELECT * FROM revenue.meetings WHERE org_id = $1 AND id = $2", [orgId, id], toMeeting),
    /** Writes the meeting as the event describes it, unless a later event already did. */
    async upsertMeeting(m: MeetingRecord, eventTime: Date): Promise<void> {
      await q.query(
        `INSERT INTO revenue.meetings (id, org_id, title, start_time, end_time, canceled, preview, attendee_emails,
           event_time)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text[], $9)
         ON CONFLICT (id) DO UPDATE SET title = EXCLUDED.title, start_time = EXCLUDED.start_time,
           end_time = EXCLUDED.end_time, canceled = revenue.meetings.canceled OR EXCLUDED.canceled,
           preview = EXCLUDED.preview, attendee_emails = EXCLUDED.attendee_emails, event_time = EXCLUDED.event_time
         WHERE revenue.meetings.event_time <= EXCLUDED.event_time`,
        [m.id, m.orgId, m.title, m.start, m.end, m.canceled, m.preview, m.attendeeEmails, eventTime],
      );
    },
    /** Marks the meeting canceled whatever the order its events arrive in. */
    async cancelMeeting(m: MeetingRecord, eventTime: Date): Promise<void> {
      await q.query(
        `INSERT INTO revenue.meetings (id, org_id, title, start_time, end_time, canceled, preview, attendee_emails,
           event_time)
         VALUES ($1, $2, $3, $4, $5, true, $6, $7::text[], $8)
         ON CONFLICT (id) DO UPDATE SET canceled = true`,
        [m.id, m.orgId, m.title, m.start, m.end, m.preview, m.attendeeEmails, eventTime],
      );
    },
    async listMeetingsOf(
      orgId: string,
      emails: readonly string[],
      since: Date | undefined,
      page: PageQuery,
    ): Promise<Keyed<MeetingRecord>[]> {
      const p = params();
      // Preview bookings are test runs: like CRM sync, the deal links leave them out.
      const where = [`m.org_id = ${p.add(orgId)}`, `m.attendee_emails && ${p.add(emails)}::text[]`, "NOT m.preview"];
      if (since) where.push(`m.start_time >= ${p.add(since)}`);
      const ks = keyset(page.sort.key, "m.id", page.sort.descending, page.after, p);
      const rows = await q.query(
        `SELECT m.* FROM revenue.meetings m WHERE ${where.join(" AND ")} AND ${ks.where}
         ORDER BY ${ks.orderBy} LIMIT ${p.add(page.limit)}`,
        p.values,
      );
      return rows.map((r) => {
        const m = toMeeting(r);
        return { item: m, position: [m.start.toISOString(), m.id] };
      });
    },

    enqueue: (event: OutboxEvent) => enqueueEvent(q, "revenue", event),
  };
}

export type RevenueQueries = ReturnType<typeof revenueQueries>;

/** The store: reads on the pool, writes in one transaction. */
export interface RevenueStore extends RevenueQueries {
  tx<T>(fn: (w: RevenueQueries) => Promise<T>): Promise<T>;
}

export function pgRevenueStore(db: Db): RevenueStore {
  return { ...revenueQueries(db), tx: (fn) => db.tx((q) => fn(revenueQueries(q))) };
}
