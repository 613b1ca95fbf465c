import { fromJson, type JsonObject, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate, ValueSchema } from "@bufbuild/protobuf/wkt";
import type {
  DealSchema as DealMessageSchema,
  DealSchemaDefinitionSchema,
  InsightRecordSchema,
  QnaSchema,
} from "@platform/contracts/revenue";
import type { CustomFields } from "./domain/custom-fields.js";
import type { DealSchemaRecord } from "./domain/deal-schema.js";
import { INSIGHT_TYPES, type InsightType } from "./domain/insight-types.js";
import type { DealRecord, InsightItemRecord, InsightRecordRow, QnaRecord } from "./domain/model.js";

// Records → messages. The gateway maps the messages to the spec's JSON.

type DealInit = MessageInitShape<typeof DealMessageSchema>;

/** Custom fields as a Struct field carries them (protobuf-es maps Struct to plain JSON). */
export function structOf(fields: CustomFields): JsonObject {
  return fields as JsonObject;
}

/** A Struct field back to custom fields; null values survive, which a PATCH uses to remove keys. */
export function jsonOfStruct(s: JsonObject | undefined): CustomFields {
  return (s ?? {}) as CustomFields;
}

/** The deal's 8P record ids by type. */
export type InsightIds = Partial<Record<InsightType, string>>;

/** A deal: list view without the detail fields; detail view with them and the 8P ids. */
export function dealMessage(d: DealRecord, view: "list" | { insightIds: InsightIds }): DealInit {
  const list: DealInit = {
    id: d.id,
    orgId: d.orgId,
    name: d.name,
    stage: d.stage,
    ...(d.amount
      ? { amount: { ...(d.amount.value !== null ? { value: d.amount.value } : {}), currency: d.amount.currency } }
      : {}),
    ...(d.closeDate ? { closeDate: d.closeDate } : {}),
    account: d.account,
    owner: d.owner,
    sourceRefs: d.crm ? { crm: { id: d.crm.id, ...(d.crm.url && view !== "list" ? { url: d.crm.url } : {}) } } : {},
    createTime: timestampFromDate(d.createdAt),
    updateTime: timestampFromDate(d.updatedAt),
  };
  if (view === "list") return list;
  const ids = view.insightIds;
  return {
    ...list,
    ...(d.primaryContact ? { primaryContact: d.primaryContact } : {}),
    schemaId: d.schemaId,
    schemaVersion: d.schemaVersion,
    customFields: structOf(d.customFields),
    insightSummary: {
      ...(ids.profile ? { profileId: ids.profile } : {}),
      ...(ids.problem ? { problemId: ids.problem } : {}),
      ...(ids.pain ? { painId: ids.pain } : {}),
      ...(ids.power ? { powerId: ids.power } : {}),
      ...(ids.position ? { positionId: ids.position } : {}),
      ...(ids.phases ? { phasesId: ids.phases } : {}),
      ...(ids.process ? { processId: ids.process } : {}),
      ...(ids.plan ? { planId: ids.plan } : {}),
    },
  };
}

export function insightIdsOf(records: readonly InsightRecordRow[]): InsightIds {
  return Object.fromEntries(records.map((r) => [r.schemaType, r.id]));
}

export function qnaMessage(q: QnaRecord): MessageInitShape<typeof QnaSchema> {
  return {
    id: q.id,
    orgId: q.orgId,
    dealId: q.dealId,
    direction: q.direction,
    state: q.state,
    questionText: q.questionText,
    ...(q.answerText !== null ? { answerText: q.answerText } : {}),
    importance: q.importance,
    ...(q.linkedInsight ? { linkedInsight: q.linkedInsight } : {}),
    ...(q.contact ? { contact: q.contact } : {}),
    occurrences: q.occurrences.map((o) => ({
      meetingId: o.meetingId,
      occurredAt: timestampFromDate(new Date(o.occurredAt)),
      source: o.source,
    })),
    createTime: timestampFromDate(q.createdAt),
    updateTime: timestampFromDate(q.updatedAt),
  };
}

export function insightItemMessage(item: InsightItemRecord) {
  const by = item.capturedBy;
  return {
    itemId: item.itemId,
    value: fromJson(ValueSchema, item.value),
    importance: item.importance,
    ...(item.rationale !== null ? { rationale: item.rationale } : {}),
    ...(item.capturedFrom
      ? {
          capturedFrom: {
            meetingId: item.capturedFrom.meetingId,
            ...(item.capturedFrom.chunkId ? { chunkId: item.capturedFrom.chunkId } : {}),
            capturedAt: timestampFromDate(new Date(item.capturedFrom.capturedAt)),
          },
        }
      : {}),
    capturedBy:
      by.type === "user"
        ? { type: by.type, userId: by.userId, displayName: by.displayName }
        : { type: by.type, agentName: by.agentName },
  };
}

export function insightMessage(r: InsightRecordRow): MessageInitShape<typeof InsightRecordSchema> {
  // The identifying fields (id, org, deal, schema and its version) keep their names in the
  // message; only the items and the times change form.
  const { fields, createdAt, updatedAt, ...identifying } = r;
  return {
    ...identifying,
    fields: Object.fromEntries(
      Object.entries(fields).map(([key, items]) => [key, { items: items.map(insightItemMessage) }]),
    ),
    createTime: timestampFromDate(createdAt),
    updateTime: timestampFromDate(updatedAt),
  };
}

export function schemaMessage(s: DealSchemaRecord): MessageInitShape<typeof DealSchemaDefinitionSchema> {
  return {
    id: s.id,
    orgId: s.orgId,
    name: s.name,
    isDefault: s.isDefault,
    version: s.version,
    stages: s.stages,
    customFields: s.customFields,
    insightFields: INSIGHT_TYPES.filter((t) => s.insightFields[t]).map((t) => ({
      schemaType: t,
      fields: s.insightFields[t] ?? [],
    })),
    createTime: timestampFromDate(s.createdAt),
    updateTime: timestampFromDate(s.updatedAt),
  };
}
