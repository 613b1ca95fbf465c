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
import { pageQuery } from "../../schemas/pagination.js";
import { createDealRequestSchema, DEAL_NOT_WRITABLE, updateDealRequestSchema } from "../../schemas/revenue.js";
import type { ServiceClients } from "../../services.js";
import { getById, listOf, readerFrom, requiredFrom } from "../shared.js";

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
const read = readerFrom("revenue");

/** Deals: list, read, create, update, by source, and their meetings. */
export function dealRoutes({ deals }: ServiceClients["revenue"]): RouteSpec[] {
  return [
    defineRoute({
      url: "/deals",
      operationId: "listDeals",
      summary: "List deals (list view)",
      tag: "Deals",
      scope: "deals:read",
      ...listOf(dealsPage, "DealListItem", {
        list: (page, q: DealListQuery, options) => deals.listDeals({ ...page, filter: dealFilter(q) }, options),
        items: (res) => res.deals,
        toJson: dealListItemJson,
      }),
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
      ...getById("dealId", "deal_", "Deal", read(deals.getDeal, "deal", dealJson)),
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
      problems: ["deal-not-found"],
      ...listOf(meetingsPage, "DealMeeting", {
        ids: { dealId: "deal_" },
        list(page, q: { since?: string }, options) {
          const since = q.since === undefined ? undefined : parseInstant(q.since, { allowDate: true });
          if (q.since !== undefined && !since) {
            throw problem("invalid-filter", "Query parameter 'since' must be an ISO 8601 date-time.", {
              field: "since",
            });
          }
          return deals.listDealMeetings({ ...page, ...(since ? { since } : {}) }, options);
        },
        items: (res) => res.meetings,
        toJson: dealMeetingJson,
      }),
    }),
    defineRoute({
      url: "/accounts/:accountId/deals",
      operationId: "listAccountDeals",
      summary: "Deals of one account (list view)",
      tag: "Deals",
      // As /accounts/{id}/contacts: a token lacking accounts:read is told accounts:read.
      scope: ["accounts:read", "deals:read"],
      problems: ["account-not-found"],
      ...listOf(accountDealsPage, "DealListItem", {
        ids: { accountId: "acct_" },
        list: (page, q: DealListQuery, options) => deals.listAccountDeals({ ...page, filter: dealFilter(q) }, options),
        items: (res) => res.deals,
        toJson: dealListItemJson,
      }),
    }),
  ];
}
