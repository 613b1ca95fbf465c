import type { Queryable, Row } from "@platform/kit/db";
import { type Keyed, keysetRows, type PageQuery, params, type SortKey } from "@platform/kit/keyset";
import { problem } from "@platform/kit/problems";
import type { DealSchemaRecord } from "../domain/deal-schema.js";
import type { DealRecord, InsightRecordRow } from "../domain/model.js";
import { dealColumns, insertSql, oneRow, toDeal, toInsightRecord, toSchema, updateSql, withDates } from "./rows.js";

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

export interface DealListFilter {
  search: string;
  accountId: string;
  stages: readonly string[];
  ownerUserId: string;
  closingBefore: string;
  closingAfter: string;
}

/** Deals of an org. */
export interface DealStore {
  findDeal(orgId: string, id: string): Promise<DealRecord | undefined>;
  /** The deal row-locked until the transaction ends, so writes to one deal run one at a time. */
  lockDeal(orgId: string, id: string): Promise<DealRecord | undefined>;
  /**
   * `lockDeal`, with the schema the deal is on and its insight records, read in the same
   * statement (a PATCH needs all three: one round trip instead of three).
   */
  lockDealForUpdate(orgId: string, id: string): Promise<LockedDeal | undefined>;
  /** The deal linked to the CRM record `crmId`. */
  findDealByCrmId(orgId: string, crmId: string): Promise<DealRecord | undefined>;
  /** One keyset page of GET /deals. */
  listDeals(orgId: string, filter: DealListFilter, page: PageQuery): Promise<Keyed<DealRecord>[]>;
  /** Fails with source-ref-conflict when another deal of the org has the CRM id. */
  insertDeal(d: DealRecord): Promise<void>;
  /** Fails with source-ref-conflict when another deal of the org has the CRM id. */
  updateDeal(d: DealRecord): Promise<void>;
}

/** A deal under its row lock, with its schema (absent only if it was deleted) and its insight records. */
export interface LockedDeal {
  deal: DealRecord;
  schema: DealSchemaRecord | undefined;
  insights: InsightRecordRow[];
}

const DEAL_COLUMNS = "d.*, to_char(d.close_date, 'YYYY-MM-DD') AS close_date_text";
const DEAL_SELECT = `SELECT ${DEAL_COLUMNS} FROM revenue.deals d`;

// The schema and the insight records come as jsonb, whose timestamps are text.
const LOCKED_DEAL = `SELECT ${DEAL_COLUMNS},
    (SELECT to_jsonb(s) FROM revenue.deal_schemas s WHERE s.org_id = d.org_id AND s.id = d.schema_id) AS schema_row,
    (SELECT COALESCE(jsonb_agg(to_jsonb(i)), '[]'::jsonb) FROM revenue.insight_records i WHERE i.deal_id = d.id)
      AS insight_rows
  FROM revenue.deals d WHERE d.org_id = $1 AND d.id = $2 FOR UPDATE OF d`;

const UNIQUE_VIOLATION = "23505";
const DEAL_CASTS = { custom_fields: "jsonb" };

/** source-ref-conflict when the CRM-reference guard fired: another deal of the org (perhaps committed a moment ago) has the id. */
function sourceRefConflict(crmId: string | undefined) {
  return (err: unknown) => {
    const e = err as { code?: string; constraint?: string; message?: string };
    if (e.code === UNIQUE_VIOLATION && `${e.constraint ?? ""}${e.message ?? ""}`.includes("deals_crm_source")) {
      return problem("source-ref-conflict", `Another deal already has sourceRefs.crm.id '${crmId}'.`, {
        sourceType: "crm",
        sourceId: crmId,
      });
    }
    return undefined;
  };
}

export function dealStore(q: Queryable): DealStore {
  return {
    findDeal: (orgId, id) => oneRow(q, `${DEAL_SELECT} WHERE d.org_id = $1 AND d.id = $2`, [orgId, id], toDeal),
    lockDeal: (orgId, id) =>
      oneRow(q, `${DEAL_SELECT} WHERE d.org_id = $1 AND d.id = $2 FOR UPDATE`, [orgId, id], toDeal),
    lockDealForUpdate: (orgId, id) =>
      oneRow(q, LOCKED_DEAL, [orgId, id], (r) => ({
        deal: toDeal(r),
        schema: r.schema_row ? toSchema(withDates(r.schema_row as Row)) : undefined,
        insights: (r.insight_rows as Row[]).map((i) => toInsightRecord(withDates(i))),
      })),
    findDealByCrmId: (orgId, crmId) =>
      oneRow(q, `${DEAL_SELECT} WHERE d.org_id = $1 AND d.crm_source_id = $2`, [orgId, crmId], toDeal),
    async listDeals(orgId, filter, page) {
      const p = params();
      const where = [`d.org_id = ${p.add(orgId)}`];
      if (filter.search) where.push(`strpos(lower(d.name), lower(${p.add(filter.search)})) > 0`);
      if (filter.accountId) where.push(`d.account_id = ${p.add(filter.accountId)}`);
      if (filter.stages.length > 0) where.push(`d.stage = ANY(${p.add(filter.stages)}::text[])`);
      if (filter.ownerUserId) where.push(`d.owner_user_id = ${p.add(filter.ownerUserId)}`);
      if (filter.closingBefore) where.push(`d.close_date <= ${p.add(filter.closingBefore)}::date`);
      if (filter.closingAfter) where.push(`d.close_date >= ${p.add(filter.closingAfter)}::date`);
      return keysetRows(q, { columns: DEAL_COLUMNS, from: "revenue.deals d", where, idExpr: "d.id" }, page, p, toDeal);
    },
    // Deferred (kit's Queryable.defer): the row goes out with the outbox row and the idempotency
    // record of the same write, one round trip for the three.
    async insertDeal(d) {
      const { sql, values } = insertSql("revenue.deals", dealColumns(d), DEAL_CASTS);
      q.defer(sql, values, sourceRefConflict(d.crm?.id));
    },
    async updateDeal(d) {
      const { sql, values } = updateSql("revenue.deals", dealColumns(d), ["org_id", "id"], DEAL_CASTS);
      q.defer(sql, values, sourceRefConflict(d.crm?.id));
    },
  };
}
