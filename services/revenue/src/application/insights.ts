import { newId } from "@platform/kit/ids";
import { problem } from "@platform/kit/problems";
import { answerFromInsight } from "../domain/auto-close.js";
import { insightField } from "../domain/deal-schema.js";
import { type JsonValue, valueMismatch } from "../domain/field-values.js";
import { INSIGHT_PREFIX, type InsightType } from "../domain/insight-types.js";
import type { CapturedBy, Importance, InsightItemRecord, InsightRecordRow, QnaRecord } from "../domain/model.js";
import { insightCreatedEvent, insightItemAppendedEvent, qnaUpdatedEvent } from "../events/outbox-events.js";
import { insightItemMessage, insightMessage, qnaMessage } from "../messages.js";
import type { TxStore } from "../store/index.js";
import { dealNotFound, lockedDeal } from "./deals.js";
import { knownMeeting } from "./qnas.js";

// The 8P insight use cases: a deal's record of a type is created once, items are appended to
// it, and an appended item answers the open discovery Q&As linked to its field.

export const recordNotFound = (what: string) => problem("insight-record-not-found", `${what} was not found.`);

/** Closes the open discovery items linked to the field as answered (the spec's auto-close). */
async function closeLinkedQnas(
  w: TxStore,
  record: InsightRecordRow,
  fieldKey: string,
  value: JsonValue,
  now: Date,
): Promise<void> {
  for (const current of await w.lockOpenLinkedQnas(record.dealId, record.schemaType, fieldKey)) {
    const item: QnaRecord = {
      ...current,
      state: "answered",
      answerText: answerFromInsight(current.answerText, value),
      answer: current.answer ?? { type: "insight", confidence: 1 },
      updatedAt: now,
    };
    await w.updateQna(item);
    await w.enqueue(
      qnaUpdatedEvent({ ...qnaMessage(item), id: item.id, orgId: item.orgId }, current.state, "insight", now),
    );
  }
}

/** Creates the deal's record of `type` unless it has one (then answered with created: false). */
export async function createInsightRecord(
  w: TxStore,
  cmd: { orgId: string; dealId: string; type: InsightType; schemaId: string | undefined },
  now: Date,
) {
  const { orgId, dealId, type } = cmd;
  const deal = await lockedDeal(w, orgId, dealId);
  const existing = await w.findDealInsight(deal.id, type);
  if (existing) return { record: insightMessage(existing), created: false };
  const schema = await w.findSchema(orgId, cmd.schemaId ?? deal.schemaId);
  if (!schema) throw problem("schema-not-found", `Deal schema ${cmd.schemaId ?? deal.schemaId} was not found.`);
  const record: InsightRecordRow = {
    id: newId(INSIGHT_PREFIX[type]),
    orgId,
    dealId: deal.id,
    schemaType: type,
    schemaId: schema.id,
    schemaVersion: schema.version,
    fields: Object.fromEntries((schema.insightFields[type] ?? []).map((f) => [f.key, []])),
    createdAt: now,
    updatedAt: now,
  };
  // The deal's row lock serialises creates of one deal; the unique (deal, type) backs it,
  // so should a create ever pass the lock, it answers the winner's record as a 200.
  if (!(await w.insertInsightIfAbsent(record))) {
    const winner = await w.findDealInsight(deal.id, type);
    if (!winner) throw new Error(`the ${type} record of deal ${deal.id} conflicted but is absent`);
    return { record: insightMessage(winner), created: false };
  }
  const message = insightMessage(record);
  await w.enqueue(insightCreatedEvent({ ...message, id: record.id, orgId }, now));
  return { record: message, created: true };
}

/** An item to append to a field of a deal's record. */
export interface AppendInsightItem {
  orgId: string;
  dealId: string;
  type: InsightType;
  fieldKey: string;
  value: JsonValue | null;
  importance: Importance;
  rationale: string | null;
  capturedFrom: { meetingId: string; chunkId: string | null } | undefined;
  capturedBy: CapturedBy;
}

/** Appends the item (checked against the field), auto-closes linked Q&As, enqueues the events. */
export async function appendInsightItem(w: TxStore, cmd: AppendInsightItem, now: Date) {
  const { orgId, dealId, type, value } = cmd;
  const deal = await w.findDeal(orgId, dealId);
  if (!deal) throw dealNotFound(dealId);
  const record = await w.lockDealInsight(deal.id, type);
  if (!record) throw recordNotFound(`The ${type} record of deal ${deal.id} (create it first)`);
  const schema = await w.findSchema(orgId, record.schemaId);
  const field = schema && insightField(schema, type, cmd.fieldKey);
  if (!field) {
    throw problem("insight-field-invalid", `The ${type} schema has no field '${cmd.fieldKey}'.`, {
      fieldKey: cmd.fieldKey,
    });
  }
  const mismatch = value === null ? `'${field.key}' needs a value` : valueMismatch(field, value);
  if (mismatch || value === null) {
    throw problem("insight-field-invalid", `value: ${mismatch}.`, {
      fieldKey: field.key,
      expectedType: field.type,
    });
  }
  if (cmd.capturedFrom) await knownMeeting(w, orgId, cmd.capturedFrom.meetingId);
  const item: InsightItemRecord = {
    itemId: newId("insi_"),
    value,
    importance: cmd.importance,
    rationale: cmd.rationale,
    capturedFrom: cmd.capturedFrom ? { ...cmd.capturedFrom, capturedAt: now.toISOString() } : null,
    capturedBy: cmd.capturedBy,
  };
  await w.appendInsightItem(record.id, field.key, item, now);
  await closeLinkedQnas(w, record, field.key, value, now);
  await w.enqueue(
    insightItemAppendedEvent(
      { recordId: record.id, dealId: deal.id, orgId, schemaType: type, fieldKey: field.key },
      insightItemMessage(item),
      now,
    ),
  );
  const updated = await w.findDealInsight(deal.id, type);
  if (!updated) throw new Error("insight record vanished inside its transaction");
  return { record: insightMessage(updated) };
}
