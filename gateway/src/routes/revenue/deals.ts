import type { ProblemName } from "@platform/kit/problems";
import { problem } from "@platform/kit/problems";
import {
  createDealRequest,
  type DealBody,
  type DealListQuery,
  dealFilter,
  dealJson,
  dealListItemJson,
  dealMeetingJson,
  updateDealRequest,
} from "../../mapping/revenue.js";
import { parseInstant } from "../../mapping/time.js";
import { defineRoute, type RouteSpec } from "../../route.js";
import { type PageQuery, pageQuery, pageRequest } from "../../schemas/pagination.js";
import { createDealRequestSchema, DEAL_NOT_WRITABLE, updateDealRequestSchema } from "../../schemas/revenue.js";
import type { ServiceClients } from "../../services.js";
import { getById, getList, pageJson, requiredFrom } from "../shared.js";

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

/** Deals: list, read, create, update, by source, and their meetings. */
export function dealRoutes({ deals }: ServiceClients["revenue"]): RouteSpec[] {
  return [
    defineRoute({
      url: "/deals",
      operationId: "listDeals",
      summary: "List deals (list view)",
      tag: "Deals",
      scope: "deals:read",
      ...getList(dealsPage, "DealListItem"),
      async handler(call, request) {
        const query = request.query as PageQuery & DealListQuery;
        const res = await deals.listDeals(
          { ...pageRequest(dealsPage.page, query), filter: dealFilter(query) },
          call.callOptions(),
        );
        return pageJson(res.deals, dealListItemJson, res.nextCursor);
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
      url: "/deals/:dealId",
      operationId: "getDeal",
      summary: "One deal (detail view, with its 8P record ids)",
      tag: "Deals",
      scope: "deals:read",
      problems: ["deal-not-found"],
      ...getById("dealId", "deal_", "Deal", async (id, call) => {
        const res = await deals.getDeal(id, call.callOptions());
        return dealJson(required(res.deal, "deal"));
      }),
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
      url: "/deals/:dealId/meetings",
      operationId: "listDealMeetings",
      summary: "Meetings linked to a deal (an attendee is a contact of the deal's account)",
      tag: "Deals",
      scope: "deals:read",
      ids: { dealId: "deal_" },
      ...getList(meetingsPage, "DealMeeting"),
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
        return pageJson(res.meetings, dealMeetingJson, res.nextCursor);
      },
    }),
    defineRoute({
      url: "/accounts/:accountId/deals",
      operationId: "listAccountDeals",
      summary: "Deals of one account (list view)",
      tag: "Deals",
      // As /accounts/{id}/contacts: a token lacking accounts:read is told accounts:read.
      scope: ["accounts:read", "deals:read"],
      ids: { accountId: "acct_" },
      ...getList(accountDealsPage, "DealListItem"),
      problems: ["account-not-found"],
      async handler(call, request) {
        const { accountId } = request.params as { accountId: string };
        const query = request.query as PageQuery & DealListQuery;
        const res = await deals.listAccountDeals(
          { accountId, ...pageRequest(accountDealsPage.page, query), filter: dealFilter(query) },
          call.callOptions(),
        );
        return pageJson(res.deals, dealListItemJson, res.nextCursor);
      },
    }),
  ];
}
