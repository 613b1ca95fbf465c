import type { DescMessage, MessageInitShape } from "@bufbuild/protobuf";
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
import { outboxEventsOf } from "@platform/kit/outbox-events";

// Revenue's events as outbox rows, keyed by the org so one org's changes stay in order on
// their partition; the subject is the resource the event is about.

const event = outboxEventsOf("revenue", TOPICS.revenue);

/** An event of `type` whose data is `init` as a `schema` message, about `subject` of `orgId`. */
function revenueEvent<S extends DescMessage>(
  type: string,
  schema: S,
  init: MessageInitShape<S>,
  orgId: string,
  subject: string,
  at: Date,
): OutboxEvent {
  return event(type, schema, init, { key: orgId, subject, time: at });
}

type Deal = MessageInitShape<typeof DealSchema>;
type Qna = MessageInitShape<typeof QnaSchema>;

export function dealCreatedEvent(deal: Deal & { id: string; orgId: string }, at: Date): OutboxEvent {
  return revenueEvent(EVENT_TYPES.dealCreated, DealCreatedSchema, { deal }, deal.orgId, deal.id, at);
}

export function dealUpdatedEvent(
  deal: Deal & { id: string; orgId: string },
  previousStage: string,
  at: Date,
): OutboxEvent {
  return revenueEvent(EVENT_TYPES.dealUpdated, DealUpdatedSchema, { deal, previousStage }, deal.orgId, deal.id, at);
}

export function qnaCreatedEvent(qna: Qna & { id: string; orgId: string }, at: Date): OutboxEvent {
  return revenueEvent(EVENT_TYPES.qnaCreated, QnaCreatedSchema, { qna }, qna.orgId, qna.id, at);
}

export function qnaUpdatedEvent(
  qna: Qna & { id: string; orgId: string },
  previousState: string,
  cause: "answer" | "transition" | "insight",
  at: Date,
  reason = "",
): OutboxEvent {
  return revenueEvent(
    EVENT_TYPES.qnaUpdated,
    QnaUpdatedSchema,
    { qna, previousState, cause, reason },
    qna.orgId,
    qna.id,
    at,
  );
}

export function insightCreatedEvent(
  record: MessageInitShape<typeof InsightRecordSchema> & { id: string; orgId: string },
  at: Date,
): OutboxEvent {
  return revenueEvent(EVENT_TYPES.insightCreated, InsightCreatedSchema, { record }, record.orgId, record.id, at);
}

export function insightItemAppendedEvent(
  appended: { recordId: string; dealId: string; orgId: string; schemaType: string; fieldKey: string },
  item: MessageInitShape<typeof InsightItemSchema>,
  at: Date,
): OutboxEvent {
  return revenueEvent(
    EVENT_TYPES.insightItemAppended,
    InsightItemAppendedSchema,
    { ...appended, item },
    appended.orgId,
    appended.recordId,
    at,
  );
}
