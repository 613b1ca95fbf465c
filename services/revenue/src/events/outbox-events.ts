import { create, type MessageInitShape, toJson } from "@bufbuild/protobuf";
import {
  DealCreatedSchema,
  DealUpdatedSchema,
  InsightCreatedSchema,
  InsightItemAppendedSchema,
  QnaCreatedSchema,
  QnaUpdatedSchema,
} from "@platform/contracts/events/revenue";
import type { DealSchema, InsightItemSchema, InsightRecordSchema, QnaSchema } from "@platform/contracts/revenue";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import type { OutboxEvent } from "@platform/kit/outbox";

// Revenue's events as outbox rows, keyed by the org so one org's changes stay in order on
// their partition; the subject is the resource the event is about.

const SOURCE = "revenue";

function revenueEvent(type: string, orgId: string, subject: string, data: unknown, at: Date): OutboxEvent {
  return { topic: TOPICS.revenue, key: orgId, type, source: SOURCE, subject, data, time: at };
}

type Deal = MessageInitShape<typeof DealSchema>;
type Qna = MessageInitShape<typeof QnaSchema>;

export function dealCreatedEvent(deal: Deal & { id: string; orgId: string }, at: Date): OutboxEvent {
  const data = toJson(DealCreatedSchema, create(DealCreatedSchema, { deal }));
  return revenueEvent(EVENT_TYPES.dealCreated, deal.orgId, deal.id, data, at);
}

export function dealUpdatedEvent(
  deal: Deal & { id: string; orgId: string },
  previousStage: string,
  at: Date,
): OutboxEvent {
  const data = toJson(DealUpdatedSchema, create(DealUpdatedSchema, { deal, previousStage }));
  return revenueEvent(EVENT_TYPES.dealUpdated, deal.orgId, deal.id, data, at);
}

export function qnaCreatedEvent(qna: Qna & { id: string; orgId: string }, at: Date): OutboxEvent {
  const data = toJson(QnaCreatedSchema, create(QnaCreatedSchema, { qna }));
  return revenueEvent(EVENT_TYPES.qnaCreated, qna.orgId, qna.id, data, at);
}

export function qnaUpdatedEvent(
  qna: Qna & { id: string; orgId: string },
  previousState: string,
  cause: "answer" | "transition" | "insight",
  at: Date,
  reason = "",
): OutboxEvent {
  const data = toJson(QnaUpdatedSchema, create(QnaUpdatedSchema, { qna, previousState, cause, reason }));
  return revenueEvent(EVENT_TYPES.qnaUpdated, qna.orgId, qna.id, data, at);
}

export function insightCreatedEvent(
  record: MessageInitShape<typeof InsightRecordSchema> & { id: string; orgId: string },
  at: Date,
): OutboxEvent {
  const data = toJson(InsightCreatedSchema, create(InsightCreatedSchema, { record }));
  return revenueEvent(EVENT_TYPES.insightCreated, record.orgId, record.id, data, at);
}

export function insightItemAppendedEvent(
  appended: { recordId: string; dealId: string; orgId: string; schemaType: string; fieldKey: string },
  item: MessageInitShape<typeof InsightItemSchema>,
  at: Date,
): OutboxEvent {
  const data = toJson(InsightItemAppendedSchema, create(InsightItemAppendedSchema, { ...appended, item }));
  return revenueEvent(EVENT_TYPES.insightItemAppended, appended.orgId, appended.recordId, data, at);
}
