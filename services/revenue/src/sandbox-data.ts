import { sandboxData } from "@platform/sandbox";
import type { Stage } from "./domain/deal-schema.js";
import type { FieldDefinition, FieldType, JsonValue } from "./domain/field-values.js";
import type { InsightType } from "./domain/insight-types.js";
import type { Importance } from "./domain/model.js";
import type { QnaState } from "./domain/qna-state.js";
import revenueData from "./sandbox-data.json" with { type: "json" };

// The sandbox's revenue data (see sandbox.ts for how it is seeded), on the CRM records
// crm-data seeds (accounts and contacts by their agreed keys) and scheduling's sandbox
// meetings. The docs and the API test rely on its facts: a deal in every stage, Won and Lost
// included; the Q&A items of the Analytical Engines deal in every state and both directions;
// its four populated 8P records; the Madras deal still on version 1 of the schema.

export interface SandboxDeal {
  key: string;
  org: string;
  name: string;
  stage: string;
  amount?: { value: number; currency: string };
  closeDate?: string;
  /** crm-data's account key. */
  account: string;
  accountName: string;
  /** identity's user label. */
  owner: string;
  primaryContact?: { key: string; displayName: string };
  customFields: Record<string, JsonValue>;
  crm?: { id: string; url: string };
  /** The schema version it was last written under (the default schema is at version 2). */
  schemaVersion?: number;
  createdDay: number;
  updatedDay: number;
}

export interface SandboxQna {
  key: string;
  deal: string;
  direction: "discovery" | "rfi";
  state: QnaState;
  questionText: string;
  answerText?: string;
  importance: Importance;
  linkedInsight?: { schemaType: InsightType; fieldKey: string };
  /** crm-data's contact key (rfi). */
  contact?: { key: string; displayName: string };
  /** scheduling's sandbox meeting label. */
  meeting: string;
}

export interface SandboxInsightItem {
  fieldKey: string;
  value: JsonValue;
  importance: Importance;
  rationale?: string;
  meeting?: string;
}

export interface SandboxInsight {
  deal: string;
  schemaType: InsightType;
  items: SandboxInsightItem[];
}

/** A field definition as data/sandbox-data.json writes it: key, label, type and the options if any. */
type FieldRow = [key: string, label: string, type: FieldType, options?: string[]];

const field = ([key, label, type, options = []]: FieldRow): FieldDefinition => ({ key, label, type, options });

// The records are plain data: sandbox-data.json (bundled by esbuild, loaded as a module by
// tsx), typed here; see @platform/sandbox's data.ts.
const data = sandboxData<{
  stages: Stage[];
  customFields: FieldRow[];
  insightFields: Record<InsightType, FieldRow[]>;
  /** Version of the default schema: version 2 added expectedGoLive. */
  schemaVersion: number;
  deals: SandboxDeal[];
  qnas: SandboxQna[];
  insights: SandboxInsight[];
}>(revenueData);

export const SANDBOX_STAGES: Stage[] = data.stages;

export const SANDBOX_CUSTOM_FIELDS: FieldDefinition[] = data.customFields.map(field);

export const SANDBOX_INSIGHT_FIELDS = Object.fromEntries(
  Object.entries(data.insightFields).map(([type, rows]) => [type, rows.map(field)]),
) as Record<InsightType, FieldDefinition[]>;

export const REVENUE_SANDBOX: {
  schemaVersion: number;
  deals: SandboxDeal[];
  qnas: SandboxQna[];
  insights: SandboxInsight[];
} = { schemaVersion: data.schemaVersion, deals: data.deals, qnas: data.qnas, insights: data.insights };
