import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { InsightService } from "@platform/contracts/revenue";
import { apiContext } from "@platform/kit/connect";
import { findById, parseId } from "@platform/kit/ids";
import { problem } from "@platform/kit/problems";
import { visibleDeal } from "../application/deals.js";
import { appendInsightItem, createInsightRecord, recordNotFound } from "../application/insights.js";
import { importanceOf } from "../application/qnas.js";
import { idempotentWrite, type WriteDeps } from "../application/write.js";
import type { JsonValue } from "../domain/field-values.js";
import { INSIGHT_PREFIXES, type InsightType, isInsightType } from "../domain/insight-types.js";
import type { CapturedBy } from "../domain/model.js";
import { insightMessage } from "../messages.js";
import type { Store } from "../store/index.js";

export interface InsightDeps extends WriteDeps {
  store: Store;
}

function schemaTypeOf(raw: string): InsightType {
  if (!isInsightType(raw)) {
    throw problem("invalid-schema-type", `'${raw}' is not one of the eight 8P types.`, { schemaType: raw });
  }
  return raw;
}

/**
 * Who appended through the API: there is no user behind a token, so the integration itself,
 * named by its token id.
 */
function apiAuthor(ctx: HandlerContext): CapturedBy {
  return { type: "ai-agent", agentName: `integration:${apiContext(ctx).tokenId}` };
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
      const record = await findById(
        INSIGHT_PREFIXES,
        req.insightId,
        "insightId",
        (id) => store.findInsight(orgId, id),
        (id) => recordNotFound(`Insight record ${id}`),
      );
      return { record: insightMessage(record) };
    },

    async createInsightRecord(req, ctx) {
      const { orgId } = apiContext(ctx);
      const type = schemaTypeOf(req.schemaType);
      const dealId = parseId("deal_", req.dealId, "dealId");
      return idempotentWrite(deps, ctx, InsightService.method.createInsightRecord, req, (w) =>
        createInsightRecord(w, { orgId, dealId, type, schemaId: req.schemaId }, clock.now()),
      );
    },

    async appendInsightItem(req, ctx) {
      const { orgId } = apiContext(ctx);
      const type = schemaTypeOf(req.schemaType);
      const dealId = parseId("deal_", req.dealId, "dealId");
      const importance = importanceOf(req.importance);
      const capturedBy = apiAuthor(ctx);
      const capturedFrom = req.capturedFrom && {
        meetingId: req.capturedFrom.meetingId,
        chunkId: req.capturedFrom.chunkId ?? null,
      };
      return idempotentWrite(deps, ctx, InsightService.method.appendInsightItem, req, (w) =>
        appendInsightItem(
          w,
          {
            orgId,
            dealId,
            type,
            fieldKey: req.fieldKey,
            value: req.value ? (toJson(ValueSchema, req.value) as JsonValue) : null,
            importance,
            rationale: req.rationale ?? null,
            capturedFrom,
            capturedBy,
          },
          clock.now(),
        ),
      );
    },
  };
}
