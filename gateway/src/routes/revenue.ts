import { fromJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { ProblemName } from "@platform/kit/problems";
import { problem } from "@platform/kit/problems";
import {
  type AnswerBody,
  type AppendBody,
  answerQnaRequest,
  createDealRequest,
  createQnaRequest,
  type DealBody,
  type DealListQuery,
  dealFilter,
  dealInsightsJson,
  dealJson,
  dealListItemJson,
  dealMeetingJson,
  insightJson,
  type QnaBody,
  qnaBacklogJson,
  qnaJson,
  updateDealRequest,
} from "../mapping/revenue.js";
import { parseInstant } from "../mapping/time.js";
import { defineRoute, type JsonSchema, type RouteSpec } from "../route.js";
import { type PageQuery, pageQuery, pageRequest, pageSchema } from "../schemas/pagination.js";
import {
  answerQnaRequestSchema,
  appendInsightItemRequestSchema,
  createDealRequestSchema,
  createInsightRequestSchema,
  createQnaRequestSchema,
  DEAL_NOT_WRITABLE,
  revenueJsonSchemas,
  transitionQnaRequestSchema,
  updateDealRequestSchema,
} from "../schemas/revenue.js";
import type { ServiceClients } from "../services.js";
import { requiredFrom } from "./shared.js";

const INSIGHT_PREFIXES = ["prof_", "prob_", "pain_", "powr_", "posn_", "phas_", "proc_", "plan_"] as const;
const DEAL_SORTS = ["updatedAt", "createdAt", "name", "closeDate", "amount"];

const dealFilters = {
  search: { type: "string", description: "Case-insensitive substring of the name" },
  stage: { type: "array", items: { type: "string" }, description: "Repeatable: any of these stages" },
  owner: { type: "string", description: "usr_ id of the deal owner" },
  closingBefore: { type: "string", description: "ISO 8601 date: closeDate <= it" },
  closingAfter: { type: "string", description: "ISO 8601 date: closeDate >= it" },
};
const dealsPage = pageQuery(DEAL_SORTS, "-updatedAt", {
  ...dealFilters,
  accountId: { type: "string", description: "acct_ id" },
});
const accountDealsPage = pageQuery(DEAL_SORTS, "-updatedAt", dealFilters);
const meetingsPage = pageQuery(["startTime"], "-startTime", {
  since: { type: "string", format: "date-time", description: "Only meetings starting at or after it" },
});

const DEAL_WRITE_PROBLEMS: ProblemName[] = [
  "account-not-found",
  "contact-not-found",
  "user-not-found",
  "schema-mismatch",
  "schema-not-found",
  "source-ref-conflict",
];

const required = requiredFrom("revenue");

const schemaTypeParams = {
  type: "object",
  properties: {
    dealId: { type: "string" },
    schemaType: { type: "string", description: "profile, problem, pain, power, position, phases, process or plan" },
  },
} as const;

/** An optional JSON body: absent is empty; present, it must be an object (its schema checked the properties). */
function optionalBody<T extends object>(body: unknown): T {
  if (body === undefined || body === null) return {} as T;
  if (typeof body !== "object" || Array.isArray(body))
    throw problem("invalid-field", "The request body must be an object.");
  return body as T;
}

/** Deals, deal Q&As and 8P insights: the routes the revenue service serves. */
export function routes(clients: ServiceClients): RouteSpec[] {
  const { deals, qnas, insights } = clients.revenue;

  const dealRoutes: RouteSpec[] = [
    defineRoute({
      method: "GET",
      url: "/deals",
      operationId: "listDeals",
      summary: "List deals (list view)",
      tag: "Deals",
      scope: "deals:read",
      tier: "read",
      page: dealsPage.page,
      schema: { querystring: dealsPage.query, response: { 200: pageSchema("DealListItem") } },
      async handler(call, request) {
        const query = request.query as PageQuery & DealListQuery;
        const res = await deals.listDeals(
          { ...pageRequest(dealsPage.page, query), filter: dealFilter(query) },
          call.callOptions(),
        );
        return { items: res.deals.map(dealListItemJson), nextCursor: res.nextCursor || null };
      },
    }),
    defineRoute({
      method: "GET",
      url: "/deals/by-source",
      operationId: "getDealBySource",
      summary: "One deal by its external reference (unknown pairs are 404)",
      tag: "Deals",
      scope: "deals:read",
      tier: "read",
      schema: {
        querystring: {
          type: "object",
          required: ["sourceType", "sourceId"],
          properties: {
            sourceType: { type: "string", enum: ["crm"], description: "crm in this version" },
            sourceId: { type: "string", minLength: 1, description: "Raw external id" },
          },
        },
        response: { 200: { $ref: "Deal#" } },
      },
      problems: ["deal-not-found"],
      async handler(call, request) {
        const { sourceType, sourceId } = request.query as { sourceType: string; sourceId: string };
        const res = await deals.getDealBySource({ sourceType, sourceId }, call.callOptions());
        return dealJson(required(res.deal, "deal"));
      },
    }),
    defineRoute({
      method: "GET",
      url: "/deals/:dealId",
      operationId: "getDeal",
      summary: "One deal (detail view, with its 8P record ids)",
      tag: "Deals",
      scope: "deals:read",
      tier: "read",
      ids: { dealId: "deal_" },
      schema: { response: { 200: { $ref: "Deal#" } } },
      problems: ["deal-not-found"],
      async handler(call, request) {
        const { dealId } = request.params as { dealId: string };
        const res = await deals.getDeal({ dealId }, call.callOptions());
        return dealJson(required(res.deal, "deal"));
      },
    }),
    defineRoute({
      method: "POST",
      url: "/deals",
      operationId: "createDeal",
      summary: "Create a deal",
      tag: "Deals",
      scope: "deals:write",
      tier: "write",
      idempotencyKey: "required",
      schema: { body: createDealRequestSchema, response: { 201: { $ref: "Deal#" } } },
      notWritable: DEAL_NOT_WRITABLE,
      problems: DEAL_WRITE_PROBLEMS,
      async handler(call, request, reply) {
        const res = await deals.createDeal(createDealRequest(request.body as DealBody), call.callOptions());
        reply.code(201);
        return dealJson(required(res.deal, "deal"));
      },
    }),
    defineRoute({
      method: "PATCH",
      url: "/deals/:dealId",
      operationId: "updateDeal",
      summary: "Update a deal (present fields change; customFields merge, null removes a key)",
      tag: "Deals",
      scope: "deals:write",
      tier: "write",
      idempotencyKey: "required",
      ids: { dealId: "deal_" },
      schema: { body: updateDealRequestSchema, response: { 200: { $ref: "Deal#" } } },
      notWritable: DEAL_NOT_WRITABLE,
      problems: [...DEAL_WRITE_PROBLEMS, "deal-not-found", "deal-closed"],
      async handler(call, request) {
        const { dealId } = request.params as { dealId: string };
        const res = await deals.updateDeal(updateDealRequest(dealId, request.body as DealBody), call.callOptions());
        return dealJson(required(res.deal, "deal"));
      },
    }),
    defineRoute({
      method: "GET",
      url: "/deals/:dealId/meetings",
      operationId: "listDealMeetings",
      summary: "Meetings linked to a deal (an attendee is a contact of the deal's account)",
      tag: "Deals",
      scope: "deals:read",
      tier: "read",
      ids: { dealId: "deal_" },
      page: meetingsPage.page,
      schema: { querystring: meetingsPage.query, response: { 200: pageSchema("DealMeeting") } },
      problems: ["deal-not-found"],
      async handler(call, request) {
        const { dealId } = request.params as { dealId: string };
        const query = request.query as PageQuery & { since?: string };
        const since = query.since === undefined ? undefined : parseInstant(query.since, { allowDate: true });
        if (query.since !== undefined && !since) {
          throw problem("invalid-filter", "Query parameter 'since' must be an ISO 8601 date-time.", { field: "since" });
        }
        const res = await deals.listDealMeetings(
          { dealId, ...pageRequest(meetingsPage.page, query), ...(since ? { since } : {}) },
          call.callOptions(),
        );
        return { items: res.meetings.map(dealMeetingJson), nextCursor: res.nextCursor || null };
      },
    }),
    defineRoute({
      method: "GET",
      url: "/accounts/:accountId/deals",
      operationId: "listAccountDeals",
      summary: "Deals of one account (list view)",
      tag: "Deals",
      // As /accounts/{id}/contacts: a token lacking accounts:read is told accounts:read.
      scope: ["accounts:read", "deals:read"],
      tier: "read",
      ids: { accountId: "acct_" },
      page: accountDealsPage.page,
      schema: { querystring: accountDealsPage.query, response: { 200: pageSchema("DealListItem") } },
      problems: ["account-not-found"],
      async handler(call, request) {
        const { accountId } = request.params as { accountId: string };
        const query = request.query as PageQuery & DealListQuery;
        const res = await deals.listAccountDeals(
          { accountId, ...pageRequest(accountDealsPage.page, query), filter: dealFilter(query) },
          call.callOptions(),
        );
        return { items: res.deals.map(dealListItemJson), nextCursor: res.nextCursor || null };
      },
    }),
  ];

  const qnaRoutes: RouteSpec[] = [
    defineRoute({
      method: "GET",
      url: "/deals/:dealId/qnas",
      operationId: "getQnaBacklog",
      summary: "Q&A backlog of a deal: six buckets, full counts, at most 25 items each",
      tag: "Q&As",
      scope: "qna:read",
      tier: "read",
      ids: { dealId: "deal_" },
      schema: { response: { 200: { $ref: "QnaBacklog#" } } },
      problems: ["deal-not-found"],
      async handler(call, request) {
        const { dealId } = request.params as { dealId: string };
        return qnaBacklogJson(await qnas.getQnaBacklog({ dealId }, call.callOptions()));
      },
    }),
    defineRoute({
      method: "GET",
      url: "/deals/:dealId/qnas/meetings/:meetingId",
      operationId: "getQnaBacklogForMeeting",
      summary: "Q&A backlog filtered to the items that came up in one meeting",
      tag: "Q&As",
      scope: "qna:read",
      tier: "read",
      ids: { dealId: "deal_", meetingId: "mtg_" },
      schema: { response: { 200: { $ref: "QnaBacklog#" } } },
      problems: ["deal-not-found", "meeting-not-found"],
      async handler(call, request) {
        const { dealId, meetingId } = request.params as { dealId: string; meetingId: string };
        return qnaBacklogJson(await qnas.getQnaBacklog({ dealId, meetingId }, call.callOptions()));
      },
    }),
    defineRoute({
      method: "GET",
      url: "/qnas/:qnaId",
      operationId: "getQna",
      summary: "One Q&A item",
      tag: "Q&As",
      scope: "qna:read",
      tier: "read",
      ids: { qnaId: "qna_" },
      schema: { response: { 200: { $ref: "Qna#" } } },
      problems: ["qna-item-not-found"],
      async handler(call, request) {
        const { qnaId } = request.params as { qnaId: string };
        const res = await qnas.getQna({ qnaId }, call.callOptions());
        return qnaJson(required(res.qna, "qna"));
      },
    }),
    defineRoute({
      method: "POST",
      url: "/deals/:dealId/qnas",
      operationId: "createQna",
      summary: "Create a Q&A item (discovery links an 8P field; rfi names a contact)",
      tag: "Q&As",
      scope: "qna:write",
      tier: "write",
      idempotencyKey: "required",
      ids: { dealId: "deal_" },
      schema: { body: createQnaRequestSchema, response: { 201: { $ref: "Qna#" } } },
      problems: [
        "deal-not-found",
        "contact-not-found",
        "meeting-not-found",
        "qna-shape-invalid",
        "insight-field-invalid",
      ],
      async handler(call, request, reply) {
        const { dealId } = request.params as { dealId: string };
        const res = await qnas.createQna(createQnaRequest(dealId, request.body as QnaBody), call.callOptions());
        reply.code(201);
        return qnaJson(required(res.qna, "qna"));
      },
    }),
    defineRoute({
      method: "POST",
      url: "/qnas/:qnaId/answer",
      operationId: "answerQna",
      summary: "Attach an answer (confidence >= 0.6 answers the item; below, it is kept as a draft)",
      tag: "Q&As",
      scope: "qna:write",
      tier: "write",
      idempotencyKey: "required",
      ids: { qnaId: "qna_" },
      schema: { body: answerQnaRequestSchema, response: { 200: { $ref: "Qna#" } } },
      problems: ["qna-item-not-found", "qna-transition-invalid", "answer-source-invalid", "meeting-not-found"],
      async handler(call, request) {
        const { qnaId } = request.params as { qnaId: string };
        const res = await qnas.answerQna(answerQnaRequest(qnaId, request.body as AnswerBody), call.callOptions());
        return qnaJson(required(res.qna, "qna"));
      },
    }),
    defineRoute({
      method: "POST",
      url: "/qnas/:qnaId/transitions/:targetState",
      operationId: "transitionQna",
      summary: "Move a Q&A item to open, answered or dismissed, as the state table allows",
      tag: "Q&As",
      scope: "qna:write",
      tier: "write",
      idempotencyKey: "required",
      ids: { qnaId: "qna_" },
      schema: { body: transitionQnaRequestSchema, response: { 200: { $ref: "Qna#" } } },
      problems: ["invalid-target-state", "qna-item-not-found", "qna-transition-invalid"],
      async handler(call, request) {
        const { qnaId, targetState } = request.params as { qnaId: string; targetState: string };
        const body = optionalBody<{ reason?: string }>(request.body);
        const res = await qnas.transitionQna({ qnaId, targetState, reason: body.reason ?? "" }, call.callOptions());
        return qnaJson(required(res.qna, "qna"));
      },
    }),
  ];

  const insightRoutes: RouteSpec[] = [
    defineRoute({
      method: "GET",
      url: "/deals/:dealId/insights",
      operationId: "listDealInsights",
      summary: "All eight insight records of a deal (null where absent)",
      tag: "8P insights",
      scope: "insights:read",
      tier: "read",
      ids: { dealId: "deal_" },
      schema: { response: { 200: { $ref: "DealInsights#" } } },
      problems: ["deal-not-found"],
      async handler(call, request) {
        const { dealId } = request.params as { dealId: string };
        const res = await insights.listDealInsights({ dealId }, call.callOptions());
        return dealInsightsJson(res.dealId, res.records);
      },
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
      method: "GET",
      url: "/insights/:insightId",
      operationId: "getInsight",
      summary: "One insight record by its 8P id (the prefix reveals the type)",
      tag: "8P insights",
      scope: "insights:read",
      tier: "read",
      ids: { insightId: INSIGHT_PREFIXES },
      schema: { response: { 200: { $ref: "Insight#" } } },
      problems: ["insight-record-not-found"],
      async handler(call, request) {
        const { insightId } = request.params as { insightId: string };
        const res = await insights.getInsight({ insightId }, call.callOptions());
        return insightJson(required(res.record, "record"));
      },
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

  return [...dealRoutes, ...qnaRoutes, ...insightRoutes];
}

/** Shared JSON schemas ($id'd) the routes above reference. */
export const schemas: readonly JsonSchema[] = revenueJsonSchemas;
