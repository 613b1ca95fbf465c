import { fromJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { INSIGHT_PREFIX } from "@platform/contracts/revenue";
import { type AppendBody, dealInsightsJson, insightJson } from "../../mapping/revenue.js";
import { defineRoute, type RouteSpec } from "../../route.js";
import { appendInsightItemRequestSchema, createInsightRequestSchema } from "../../schemas/revenue.js";
import type { ServiceClients } from "../../services.js";
import { getById, optionalBody, readerFrom, requiredFrom } from "../shared.js";

const INSIGHT_PREFIXES = Object.values(INSIGHT_PREFIX);

const required = requiredFrom("revenue");
const read = readerFrom("revenue");

const schemaTypeParams = {
  type: "object",
  properties: {
    dealId: { type: "string" },
    schemaType: { type: "string", description: "profile, problem, pain, power, position, phases, process or plan" },
  },
} as const;

/** The deal's 8P insight records and their fields. */
export function insightRoutes({ insights }: ServiceClients["revenue"]): RouteSpec[] {
  return [
    defineRoute({
      url: "/deals/:dealId/insights",
      operationId: "listDealInsights",
      summary: "All eight insight records of a deal (null where absent)",
      tag: "8P insights",
      scope: "insights:read",
      problems: ["deal-not-found"],
      ...getById("dealId", "deal_", "DealInsights", async (id, call) => {
        const res = await insights.listDealInsights(id, call.callOptions());
        return dealInsightsJson(res.dealId, res.records);
      }),
    }),
    defineRoute({
      method: "GET",
      url: "/deals/:dealId/insights/:schemaType",
      operationId: "getDealInsight",
      summary: "One insight record of a deal",
      tag: "8P insights",
      scope: "insights:read",
      tier: "read",
      ids: { dealId: "deal_" },
      schema: { params: schemaTypeParams, response: { 200: { $ref: "Insight#" } } },
      problems: ["invalid-schema-type", "deal-not-found", "insight-record-not-found"],
      async handler(call, request) {
        const { dealId, schemaType } = request.params as { dealId: string; schemaType: string };
        const res = await insights.getDealInsight({ dealId, schemaType }, call.callOptions());
        return insightJson(required(res.record, "record"));
      },
    }),
    defineRoute({
      url: "/insights/:insightId",
      operationId: "getInsight",
      summary: "One insight record by its 8P id (the prefix reveals the type)",
      tag: "8P insights",
      scope: "insights:read",
      problems: ["insight-record-not-found"],
      ...getById("insightId", INSIGHT_PREFIXES, "Insight", read(insights.getInsight, "record", insightJson)),
    }),
    defineRoute({
      method: "POST",
      url: "/deals/:dealId/insights/:schemaType",
      operationId: "createDealInsight",
      summary: "Create the deal's record of a type: 201 new (empty fields), 200 when it exists",
      tag: "8P insights",
      scope: "insights:write",
      tier: "write",
      idempotencyKey: "required",
      ids: { dealId: "deal_" },
      schema: {
        params: schemaTypeParams,
        body: createInsightRequestSchema,
        response: { 200: { $ref: "Insight#" }, 201: { $ref: "Insight#" } },
      },
      problems: ["invalid-schema-type", "deal-not-found", "schema-not-found"],
      async handler(call, request, reply) {
        const { dealId, schemaType } = request.params as { dealId: string; schemaType: string };
        const body = optionalBody<{ schemaId?: string }>(request.body);
        const res = await insights.createInsightRecord(
          { dealId, schemaType, ...(body.schemaId !== undefined ? { schemaId: body.schemaId } : {}) },
          call.callOptions(),
        );
        reply.code(res.created ? 201 : 200);
        return insightJson(required(res.record, "record"));
      },
    }),
    defineRoute({
      method: "POST",
      url: "/deals/:dealId/insights/:schemaType/fields/:fieldKey",
      operationId: "appendInsightItem",
      summary: "Append an item to a field of an insight record (items are never changed or removed)",
      tag: "8P insights",
      scope: "insights:write",
      tier: "write",
      idempotencyKey: "required",
      ids: { dealId: "deal_" },
      schema: { body: appendInsightItemRequestSchema, response: { 200: { $ref: "Insight#" } } },
      problems: [
        "invalid-schema-type",
        "deal-not-found",
        "insight-record-not-found",
        "meeting-not-found",
        "insight-field-invalid",
      ],
      async handler(call, request) {
        const { dealId, schemaType, fieldKey } = request.params as {
          dealId: string;
          schemaType: string;
          fieldKey: string;
        };
        const body = request.body as AppendBody;
        const res = await insights.appendInsightItem(
          {
            dealId,
            schemaType,
            fieldKey,
            value: fromJson(ValueSchema, body.value),
            ...(body.importance !== undefined ? { importance: body.importance } : {}),
            ...(body.rationale !== undefined ? { rationale: body.rationale } : {}),
            ...(body.capturedFrom ? { capturedFrom: body.capturedFrom } : {}),
          },
          call.callOptions(),
        );
        return insightJson(required(res.record, "record"));
      },
    }),
  ];
}
