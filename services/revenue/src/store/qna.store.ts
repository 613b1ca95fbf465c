import type { Queryable } from "@platform/kit/db";
import type { InsightType } from "../domain/insight-types.js";
import type { QnaRecord } from "../domain/model.js";
import type { QnaState } from "../domain/qna-state.js";
import { insertSql, oneRow, qnaColumns, toQna, updateSql } from "./rows.js";

/** One bucket of a backlog: the full count and the first items. */
export interface Bucket {
  count: number;
  items: QnaRecord[];
}

export type Backlog = Record<QnaRecord["direction"], Record<QnaState, Bucket>>;

/** Items per backlog bucket (the spec's limit). */
export const BUCKET_ITEMS = 25;

/** Q&A items of deals. */
export interface QnaStore {
  findQna(orgId: string, id: string): Promise<QnaRecord | undefined>;
  /** The item row-locked until the transaction ends. */
  lockQna(orgId: string, id: string): Promise<QnaRecord | undefined>;
  insertQna(item: QnaRecord): Promise<void>;
  updateQna(item: QnaRecord): Promise<void>;
  /** Open discovery items of the deal linked to the 8P field, locked for the auto-close. */
  lockOpenLinkedQnas(dealId: string, schemaType: InsightType, fieldKey: string): Promise<QnaRecord[]>;
  /** The six buckets: full counts, and the most recently updated items of each. */
  backlog(dealId: string, meetingId: string | undefined): Promise<Backlog>;
}

const QNA_CASTS = { answer: "jsonb", occurrences: "jsonb" };

export function qnaStore(q: Queryable): QnaStore {
  return {
    findQna: (orgId, id) => oneRow(q, "SELECT * FROM revenue.qnas WHERE org_id = $1 AND id = $2", [orgId, id], toQna),
    lockQna: (orgId, id) =>
      oneRow(q, "SELECT * FROM revenue.qnas WHERE org_id = $1 AND id = $2 FOR UPDATE", [orgId, id], toQna),
    async insertQna(item) {
      const { sql, values } = insertSql("revenue.qnas", qnaColumns(item), QNA_CASTS);
      await q.query(sql, values);
    },
    async updateQna(item) {
      const { sql, values } = updateSql("revenue.qnas", qnaColumns(item), ["org_id", "id"], QNA_CASTS);
      await q.query(sql, values);
    },
    async lockOpenLinkedQnas(dealId, schemaType, fieldKey) {
      const rows = await q.query(
        `SELECT * FROM revenue.qnas WHERE deal_id = $1 AND direction = 'discovery' AND state = 'open'
           AND linked_schema_type = $2 AND linked_field_key = $3 ORDER BY id FOR UPDATE`,
        [dealId, schemaType, fieldKey],
      );
      return rows.map(toQna);
    },
    async backlog(dealId, meetingId) {
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
  };
}
