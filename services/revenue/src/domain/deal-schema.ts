import type { FieldDefinition } from "./field-values.js";
import type { InsightType } from "./insight-types.js";

/** open stages move freely; won and lost are terminal. */
export type Outcome = "open" | "won" | "lost";

export interface Stage {
  name: string;
  outcome: Outcome;
}

export interface DealSchemaRecord {
  id: string;
  orgId: string;
  name: string;
  isDefault: boolean;
  version: number;
  stages: Stage[];
  customFields: FieldDefinition[];
  insightFields: Partial<Record<InsightType, FieldDefinition[]>>;
  createdAt: Date;
  updatedAt: Date;
}

/** The schema's stage of that name (exact, as deals carry it); undefined when the schema has none. */
export function stageOf(schema: DealSchemaRecord, name: string): Stage | undefined {
  return schema.stages.find((s) => s.name === name);
}

export const isTerminal = (outcome: Outcome): boolean => outcome !== "open";

/** The field of an 8P type in the schema; undefined when the schema lacks it. */
export function insightField(
  schema: DealSchemaRecord,
  type: InsightType,
  fieldKey: string,
): FieldDefinition | undefined {
  return schema.insightFields[type]?.find((f) => f.key === fieldKey);
}

/**
 * The schema version a deal records after an update: the version of the schema it is written
 * under now. A deal written before a schema change carries the old version until its next
 * update, which is how clients see that its shape may differ.
 */
export function schemaVersionAfterUpdate(schema: Pick<DealSchemaRecord, "version">): number {
  return schema.version;
}
