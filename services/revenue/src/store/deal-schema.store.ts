import type { Queryable } from "@platform/kit/db";
import type { DealSchemaRecord } from "../domain/deal-schema.js";
import { oneRow, toSchema } from "./rows.js";

/** Deal schemas: configured per org by the platform team; deals are checked against them. */
export interface DealSchemaStore {
  /** The org's schema `id`. */
  findSchema(orgId: string, id: string): Promise<DealSchemaRecord | undefined>;
  /** The org's default schema, used when a deal names none. */
  defaultSchema(orgId: string): Promise<DealSchemaRecord | undefined>;
  /** Any org's schema `id` (the admin plane). */
  findSchemaById(id: string): Promise<DealSchemaRecord | undefined>;
  /** The org's schemas, the default first. */
  listSchemas(orgId: string): Promise<DealSchemaRecord[]>;
  insertSchema(s: DealSchemaRecord): Promise<void>;
}

export function dealSchemaStore(q: Queryable): DealSchemaStore {
  return {
    findSchema: (orgId, id) =>
      oneRow(q, "SELECT * FROM revenue.deal_schemas WHERE org_id = $1 AND id = $2", [orgId, id], toSchema),
    defaultSchema: (orgId) =>
      oneRow(q, "SELECT * FROM revenue.deal_schemas WHERE org_id = $1 AND is_default", [orgId], toSchema),
    findSchemaById: (id) => oneRow(q, "SELECT * FROM revenue.deal_schemas WHERE id = $1", [id], toSchema),
    async listSchemas(orgId) {
      const rows = await q.query(
        "SELECT * FROM revenue.deal_schemas WHERE org_id = $1 ORDER BY is_default DESC, created_at, id",
        [orgId],
      );
      return rows.map(toSchema);
    },
    async insertSchema(s) {
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
  };
}
