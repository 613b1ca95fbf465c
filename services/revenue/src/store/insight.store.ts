import type { Queryable } from "@platform/kit/db";
import type { InsightType } from "../domain/insight-types.js";
import type { InsightItemRecord, InsightRecordRow } from "../domain/model.js";
import { oneRow, toInsightRecord } from "./rows.js";

/** The 8P insight records of deals: one per deal and type, items appended, never rewritten. */
export interface InsightStore {
  findInsight(orgId: string, id: string): Promise<InsightRecordRow | undefined>;
  findDealInsight(dealId: string, type: InsightType): Promise<InsightRecordRow | undefined>;
  /** The record row-locked until the transaction ends. */
  lockDealInsight(dealId: string, type: InsightType): Promise<InsightRecordRow | undefined>;
  listDealInsights(dealId: string): Promise<InsightRecordRow[]>;
  /** Inserts the record unless the deal has one of its type; true when inserted. */
  insertInsightIfAbsent(r: InsightRecordRow): Promise<boolean>;
  /** Appends at the end of the field's array: items are never rewritten or reordered. */
  appendInsightItem(id: string, fieldKey: string, item: InsightItemRecord, at: Date): Promise<void>;
}

const BY_DEAL_AND_TYPE = "SELECT * FROM revenue.insight_records WHERE deal_id = $1 AND schema_type = $2";

export function insightStore(q: Queryable): InsightStore {
  return {
    findInsight: (orgId, id) =>
      oneRow(q, "SELECT * FROM revenue.insight_records WHERE org_id = $1 AND id = $2", [orgId, id], toInsightRecord),
    findDealInsight: (dealId, type) => oneRow(q, BY_DEAL_AND_TYPE, [dealId, type], toInsightRecord),
    lockDealInsight: (dealId, type) => oneRow(q, `${BY_DEAL_AND_TYPE} FOR UPDATE`, [dealId, type], toInsightRecord),
    async listDealInsights(dealId) {
      const rows = await q.query("SELECT * FROM revenue.insight_records WHERE deal_id = $1", [dealId]);
      return rows.map(toInsightRecord);
    },
    async insertInsightIfAbsent(r) {
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
    async appendInsightItem(id, fieldKey, item, at) {
      await q.query(
        `UPDATE revenue.insight_records
         SET fields = jsonb_set(fields, ARRAY[$2::text], COALESCE(fields -> $2::text, '[]'::jsonb) || jsonb_build_array($3::jsonb)),
             updated_at = $4
         WHERE id = $1`,
        [id, fieldKey, JSON.stringify(item), at],
      );
    },
  };
}
