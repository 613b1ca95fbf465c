import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  AppendInsightItemRequestSchema,
  AppendInsightItemResponseSchema,
  CreateInsightRecordRequestSchema,
  CreateInsightRecordResponseSchema,
  type InsightService,
} from "@platform/contracts/revenue";
import { apiContext } from "@platform/kit/connect";
import { newId, parseId } from "@platform/kit/ids";
import { problem } from "@platform/kit/problems";
import { dealNotFound, visibleDeal } from "./deal.handler.js";
import { answerFromInsight } from "./domain/auto-close.js";
import { insightField } from "./domain/deal-schema.js";
import { type JsonValue, valueMismatch } from "./domain/field-values.js";
import { INSIGHT_PREFIX, INSIGHT_PREFIXES, type InsightType, isInsightType } from "./domain/insight-types.js";
import { insightCreatedEvent, insightItemAppendedEvent, qnaUpdatedEvent } from "./events/outbox-events.js";
import type { CapturedBy, InsightItemRecord, InsightRecordRow, QnaRecord } from "./model.js";
import { insightItemMessage, insightMessage, qnaMessage } from "./proto.js";
import { importanceOf, knownMeeting } from "./qna.handler.js";
import type { RevenueQueries, RevenueStore } from "./store/revenue.store.js";
import { idempotentWrite, type WriteDeps } from "./write.js";

export interface InsightDeps extends WriteDeps {
  store: RevenueStore;
}

function schemaTypeOf(raw: string): InsightType {
  if (!isInsightType(raw)) {
    throw problem("invalid-schema-type", `'${raw}' is not one of the eight 8P types.`, { schemaType: raw });
  }
  return raw;
}

const recordNotFound = (what: string) => problem("insight-record-not-found", `${what} was not found.`);

/**
 * Who appended through the API: there is no user behind a token, so the integration itself,
 * named by its token id.
 */
function apiAuthor(ctx: HandlerContext): CapturedBy {
  return { type: "ai-agent", agentName: `integration:${apiContext(ctx).tokenId}` };
}

/** Closes the open discovery items linked to the field as answered (the spec's auto-close). */
async function closeLinkedQnas(
  w: RevenueQueries,
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

/** The eight append-only insight records of a deal. */
export function insightHandlers(deps: InsightDeps): ServiceImpl<typeof InsightService> {
  const { store, clock } = deps;

  return {
    async listDealInsights(req, ctx) {
      const { orgId } = apiContext(ctx);
      const deal = await visibleDeal(store, orgId, req.dealId);
      const records = await store.listDealInsights(deal.id);
      return { dealId: deal.id, records: records.map(insightMessage) };
    },

    async getDealInsight(req, ctx) {
      const { orgId } = apiContext(ctx);
      const type = schemaTypeOf(req.schemaType);
      const deal = await visibleDeal(store, orgId, req.dealId);
      const record = await store.findDealInsight(deal.id, type);
      if (!record) throw recordNotFound(`The ${type} record of deal ${deal.id}`);
      return { record: insightMessage(record) };
    },

    async getInsight(req, ctx) {
      const { orgId } = apiContext(ctx);
      const id = parseId(INSIGHT_PREFIXES, req.insightId, "insightId");
      const record = await store.findInsight(orgId, id);
      if (!record) throw recordNotFound(`Insight record ${id}`);
      return { record: insightMessage(record) };
    },

    async createInsightRecord(req, ctx) {
      const { orgId } = apiContext(ctx);
      const type = schemaTypeOf(req.schemaType);
      const dealId = parseId("deal_", req.dealId, "dealId");
      return idempotentWrite(
        deps,
        ctx,
        { schema: CreateInsightRecordRequestSchema, message: req },
        CreateInsightRecordResponseSchema,
        async (w) => {
          const now = clock.now();
          const deal = await w.lockDeal(orgId, dealId);
          if (!deal) throw dealNotFound(dealId);
          const existing = await w.findDealInsight(deal.id, type);
          if (existing) return { record: insightMessage(existing), created: false };
          const schema = await w.findSchema(orgId, req.schemaId ?? deal.schemaId);
          if (!schema) throw problem("schema-not-found", `Deal schema ${req.schemaId ?? deal.schemaId} was not found.`);
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
        },
      );
    },

    async appendInsightItem(req, ctx) {
      const { orgId } = apiContext(ctx);
      const type = schemaTypeOf(req.schemaType);
      const dealId = parseId("deal_", req.dealId, "dealId");
      const importance = importanceOf(req.importance);
      const author = apiAuthor(ctx);
      return idempotentWrite(
        deps,
        ctx,
        { schema: AppendInsightItemRequestSchema, message: req },
        AppendInsightItemResponseSchema,
        async (w) => {
          const now = clock.now();
          const deal = await w.findDeal(orgId, dealId);
          if (!deal) throw dealNotFound(dealId);
          const record = await w.lockDealInsight(deal.id, type);
          if (!record) throw recordNotFound(`The ${type} record of deal ${deal.id} (create it first)`);
          const schema = await w.findSchema(orgId, record.schemaId);
          const field = schema && insightField(schema, type, req.fieldKey);
          if (!field) {
            throw problem("insight-field-invalid", `The ${type} schema has no field '${req.fieldKey}'.`, {
              fieldKey: req.fieldKey,
            });
          }
          const value = req.value ? (toJson(ValueSchema, req.value) as JsonValue) : null;
          const mismatch = value === null ? `'${field.key}' needs a value` : valueMismatch(field, value);
          if (mismatch || value === null) {
            throw problem("insight-field-invalid", `value: ${mismatch}.`, {
              fieldKey: field.key,
              expectedType: field.type,
            });
          }
          if (req.capturedFrom) await knownMeeting(w, orgId, req.capturedFrom.meetingId);
          const item: InsightItemRecord = {
            itemId: newId("insi_"),
            value,
            importance,
            rationale: req.rationale ?? null,
            capturedFrom: req.capturedFrom
              ? {
                  meetingId: req.capturedFrom.meetingId,
                  chunkId: req.capturedFrom.chunkId ?? null,
                  capturedAt: now.toISOString(),
                }
              : null,
            capturedBy: author,
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
        },
      );
    },
  };
}
