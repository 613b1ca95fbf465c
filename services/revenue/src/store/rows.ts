import { dateOrNull, type Queryable, type Row, textOrNull } from "@platform/kit/db";
import type { CustomFields } from "../domain/custom-fields.js";
import type { DealSchemaRecord, Outcome } from "../domain/deal-schema.js";
import type { InsightType } from "../domain/insight-types.js";
import type {
  DealRecord,
  Importance,
  InsightItemRecord,
  InsightRecordRow,
  MeetingRecord,
  QnaOccurrence,
  QnaRecord,
} from "../domain/model.js";
import type { QnaState } from "../domain/qna-state.js";

// Rows ↔ records. The queries select close_date as YYYY-MM-DD text (close_date_text), so a
// date never passes through a Date in the server's zone.

const str = (v: unknown): string => v as string;

/** A row read as jsonb (to_jsonb), whose timestamps are text: with them as Dates. */
export const withDates = (r: Row): Row => ({
  ...r,
  created_at: dateOrNull(r.created_at),
  updated_at: dateOrNull(r.updated_at),
});

export function toSchema(r: Row): DealSchemaRecord {
  return {
    id: str(r.id),
    orgId: str(r.org_id),
    name: str(r.name),
    isDefault: r.is_default as boolean,
    version: Number(r.version),
    stages: r.stages as DealSchemaRecord["stages"],
    customFields: r.custom_fields as DealSchemaRecord["customFields"],
    insightFields: r.insight_fields as DealSchemaRecord["insightFields"],
    createdAt: r.created_at as Date,
    updatedAt: r.updated_at as Date,
  };
}

export function toDeal(r: Row): DealRecord {
  const currency = textOrNull(r.amount_currency);
  const contactId = textOrNull(r.primary_contact_id);
  const crmId = textOrNull(r.crm_source_id);
  return {
    id: str(r.id),
    orgId: str(r.org_id),
    name: str(r.name),
    stage: str(r.stage),
    outcome: r.outcome as Outcome,
    amount: currency ? { value: r.amount_value === null ? null : Number(r.amount_value), currency } : null,
    closeDate: textOrNull(r.close_date_text),
    account: { id: str(r.account_id), name: str(r.account_name) },
    owner: { userId: str(r.owner_user_id), displayName: str(r.owner_display_name) },
    primaryContact: contactId ? { id: contactId, displayName: str(r.primary_contact_name) } : null,
    schemaId: str(r.schema_id),
    schemaVersion: Number(r.schema_version),
    customFields: r.custom_fields as CustomFields,
    crm: crmId ? { id: crmId, url: textOrNull(r.crm_source_url) } : null,
    createdAt: r.created_at as Date,
    updatedAt: r.updated_at as Date,
  };
}

/** The deal's columns in insert order, with their values. */
export function dealColumns(d: DealRecord): Record<string, unknown> {
  return {
    id: d.id,
    org_id: d.orgId,
    name: d.name,
    stage: d.stage,
    outcome: d.outcome,
    amount_value: d.amount?.value ?? null,
    amount_currency: d.amount?.currency ?? null,
    close_date: d.closeDate,
    account_id: d.account.id,
    account_name: d.account.name,
    owner_user_id: d.owner.userId,
    owner_display_name: d.owner.displayName,
    primary_contact_id: d.primaryContact?.id ?? null,
    primary_contact_name: d.primaryContact?.displayName ?? null,
    schema_id: d.schemaId,
    schema_version: d.schemaVersion,
    custom_fields: JSON.stringify(d.customFields),
    crm_source_id: d.crm?.id ?? null,
    crm_source_url: d.crm?.url ?? null,
    created_at: d.createdAt,
    updated_at: d.updatedAt,
  };
}

export function toQna(r: Row): QnaRecord {
  const schemaType = textOrNull(r.linked_schema_type);
  const contactId = textOrNull(r.contact_id);
  return {
    id: str(r.id),
    orgId: str(r.org_id),
    dealId: str(r.deal_id),
    direction: r.direction as QnaRecord["direction"],
    state: r.state as QnaState,
    questionText: str(r.question_text),
    answerText: textOrNull(r.answer_text),
    answer: (r.answer ?? null) as QnaRecord["answer"],
    importance: r.importance as Importance,
    linkedInsight: schemaType ? { schemaType: schemaType as InsightType, fieldKey: str(r.linked_field_key) } : null,
    contact: contactId ? { id: contactId, displayName: str(r.contact_name) } : null,
    occurrences: r.occurrences as QnaOccurrence[],
    createdAt: r.created_at as Date,
    updatedAt: r.updated_at as Date,
  };
}

export function qnaColumns(q: QnaRecord): Record<string, unknown> {
  return {
    id: q.id,
    org_id: q.orgId,
    deal_id: q.dealId,
    direction: q.direction,
    state: q.state,
    question_text: q.questionText,
    answer_text: q.answerText,
    answer: q.answer === null ? null : JSON.stringify(q.answer),
    importance: q.importance,
    linked_schema_type: q.linkedInsight?.schemaType ?? null,
    linked_field_key: q.linkedInsight?.fieldKey ?? null,
    contact_id: q.contact?.id ?? null,
    contact_name: q.contact?.displayName ?? null,
    occurrences: JSON.stringify(q.occurrences),
    created_at: q.createdAt,
    updated_at: q.updatedAt,
  };
}

export function toInsightRecord(r: Row): InsightRecordRow {
  return {
    id: str(r.id),
    orgId: str(r.org_id),
    dealId: str(r.deal_id),
    schemaType: r.schema_type as InsightType,
    schemaId: str(r.schema_id),
    schemaVersion: Number(r.schema_version),
    fields: r.fields as Record<string, InsightItemRecord[]>,
    createdAt: r.created_at as Date,
    updatedAt: r.updated_at as Date,
  };
}

export function toMeeting(r: Row): MeetingRecord {
  return {
    id: str(r.id),
    orgId: str(r.org_id),
    title: str(r.title),
    start: r.start_time as Date,
    end: r.end_time as Date,
    canceled: r.canceled as boolean,
    preview: r.preview as boolean,
    attendeeEmails: r.attendee_emails as string[],
  };
}

/** INSERT of one row's columns; `casts` adds a type to a placeholder (jsonb). */
export function insertSql(table: string, columns: Record<string, unknown>, casts: Record<string, string> = {}) {
  const names = Object.keys(columns);
  const placeholders = names.map((n, i) => `$${i + 1}${casts[n] ? `::${casts[n]}` : ""}`);
  return {
    sql: `INSERT INTO ${table} (${names.join(", ")}) VALUES (${placeholders.join(", ")})`,
    values: Object.values(columns),
  };
}

/** UPDATE of every column but the key ones, by id. */
export function updateSql(
  table: string,
  columns: Record<string, unknown>,
  keys: readonly string[],
  casts: Record<string, string> = {},
) {
  const names = Object.keys(columns).filter((n) => !keys.includes(n));
  const sets = names.map((n, i) => `${n} = $${i + 1}${casts[n] ? `::${casts[n]}` : ""}`);
  const where = keys.map((k, i) => `${k} = $${names.length + i + 1}`);
  return {
    sql: `UPDATE ${table} SET ${sets.join(", ")} WHERE ${where.join(" AND ")}`,
    values: [...names.map((n) => columns[n]), ...keys.map((k) => columns[k])],
  };
}

/** The first row of a query mapped to a record, or undefined when there is none. */
export async function oneRow<T>(
  q: Queryable,
  sql: string,
  values: unknown[],
  map: (r: Row) => T,
): Promise<T | undefined> {
  const [row] = await q.query(sql, values);
  return row ? map(row) : undefined;
}
