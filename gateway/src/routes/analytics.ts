import { EMAIL_ACTIONS } from "@platform/contracts/analytics";
import {
  activityJson,
  buyerSignalsSummaryJson,
  emailBlastJson,
  emailBlastRecipientJson,
  emailBlastRowJson,
  emailBlastSummaryJson,
  recipientSignalJson,
  sentEmailJson,
  topEmailBlastJson,
} from "../mapping/analytics.js";
import { defineRoute, type JsonSchema, type RouteSpec } from "../route.js";
import { analyticsResponseSchemas, ownerUserId, periodDays } from "../schemas/analytics.js";
import { str } from "../schemas/common.js";
import { type PageQuery, pageQuery, pageRequest } from "../schemas/pagination.js";
import type { ServiceClients } from "../services.js";
import { getById, getList, pageJson, requiredFrom } from "./shared.js";

const required = requiredFrom("analytics");

const hasReplied = { type: "boolean", description: "Only recipients who replied (true) or did not (false)" };

/**
 * A list's page query plus periodDays, which is not a filter: a bad value is the same 400
 * invalid-field naming periodDays as on the endpoints without pages.
 */
function withPeriod(page: ReturnType<typeof pageQuery>): ReturnType<typeof pageQuery> {
  const query = page.query as { properties: Record<string, unknown> };
  return { page: page.page, query: { ...page.query, properties: { ...query.properties, periodDays } } };
}

const periodQuery: JsonSchema = { type: "object", properties: { periodDays } };

const sentEmailsPage = withPeriod(
  pageQuery(["sentAt", "lastReplyAt", "lastOpenAt", "lastClickAt", "replies", "opens", "clicks"], "-sentAt", {
    search: str("Case-insensitive substring of the subject or of a recipient email"),
    emailType: { type: "string", enum: ["standard", "email-blast", "all"], default: "all" },
  }),
);
const signalsPage = pageQuery(["lastReplyAt", "lastOpenAt", "replies", "opens"], "-lastReplyAt", { hasReplied });
const blastsPage = withPeriod(
  pageQuery(["sentAt", "openRate", "clickRate", "replyRate", "engagementScore", "recipientCount"], "-sentAt", {
    ownerUserId,
    search: str("Case-insensitive substring of the blast or template name"),
  }),
);
const recipientsPage = pageQuery(["lastReplyAt", "lastOpenAt", "replies", "opens", "sentAt"], "-lastOpenAt", {
  hasReplied,
  search: str("Case-insensitive substring of the recipient email"),
});

const TOP_DEFAULT = 5;
const TOP_MAX = 20;

type PeriodQuery = { periodDays: number };

/** Buyer signals and email blasts (analytics service): REST routes. */
export function routes(clients: ServiceClients): RouteSpec[] {
  const { signals, blasts } = clients.analytics;
  const buyerSignals = { tag: "Buyer signals", scope: "buyer-signals:read", tier: "read" } as const;
  const emailBlasts = { tag: "Email blasts", scope: "email-blasts:read", tier: "read" } as const;

  return [
    defineRoute({
      ...buyerSignals,
      method: "GET",
      url: "/buyer-signals/summary",
      operationId: "getBuyerSignalsSummary",
      summary: "Email engagement over a period, in unique recipients",
      schema: { querystring: periodQuery, response: { 200: { $ref: "BuyerSignalsSummary#" } } },
      async handler(call, request) {
        const q = request.query as PeriodQuery;
        return buyerSignalsSummaryJson(
          await signals.getBuyerSignalsSummary({ periodDays: q.periodDays }, call.callOptions()),
        );
      },
    }),
    defineRoute({
      ...buyerSignals,
      method: "GET",
      url: "/buyer-signals/activity",
      operationId: "getBuyerSignalsActivity",
      summary: "Raw daily counts of sends, opens, clicks and replies",
      filters: ["action"],
      schema: {
        querystring: {
          type: "object",
          properties: {
            periodDays,
            action: {
              type: "array",
              items: { type: "string", enum: [...EMAIL_ACTIONS] },
              description: "Repeatable; default all",
            },
          },
        },
        response: { 200: { $ref: "BuyerSignalsActivity#" } },
      },
      async handler(call, request) {
        const q = request.query as PeriodQuery & { action?: string[] };
        const res = await signals.getBuyerSignalsActivity(
          { periodDays: q.periodDays, actions: q.action ?? [] },
          call.callOptions(),
        );
        return activityJson(res.periodDays, res.items);
      },
    }),
    defineRoute({
      ...buyerSignals,
      url: "/buyer-signals/sent-emails",
      operationId: "listSentEmails",
      summary: "Sent emails with their engagement",
      ...getList(sentEmailsPage, "SentEmail"),
      async handler(call, request) {
        const q = request.query as PageQuery & PeriodQuery & { search?: string; emailType: string };
        const res = await signals.listSentEmails(
          {
            ...pageRequest(sentEmailsPage.page, q),
            periodDays: q.periodDays,
            search: q.search ?? "",
            emailType: q.emailType,
          },
          call.callOptions(),
        );
        return pageJson(res.sentEmails, sentEmailJson, res.nextCursor);
      },
    }),
    defineRoute({
      ...buyerSignals,
      url: "/buyer-signals/sent-emails/:sentEmailId",
      operationId: "getSentEmail",
      summary: "One sent email",
      problems: ["sent-email-not-found"],
      ...getById("sentEmailId", "semail_", "SentEmail", async (id, call) => {
        const res = await signals.getSentEmail(id, call.callOptions());
        return sentEmailJson(required(res.sentEmail, "sent email"));
      }),
    }),
    defineRoute({
      ...buyerSignals,
      url: "/buyer-signals/sent-emails/:sentEmailId/signals",
      operationId: "listSentEmailSignals",
      summary: "Per-recipient signals of a sent email",
      ids: { sentEmailId: "semail_" },
      ...getList(signalsPage, "RecipientSignal"),
      problems: ["sent-email-not-found"],
      async handler(call, request) {
        const { sentEmailId } = request.params as { sentEmailId: string };
        const q = request.query as PageQuery & { hasReplied?: boolean };
        const res = await signals.listSentEmailSignals(
          {
            sentEmailId,
            ...pageRequest(signalsPage.page, q),
            ...(q.hasReplied === undefined ? {} : { hasReplied: q.hasReplied }),
          },
          call.callOptions(),
        );
        return pageJson(res.signals, recipientSignalJson, res.nextCursor);
      },
    }),
    defineRoute({
      ...emailBlasts,
      method: "GET",
      url: "/email-blasts/summary",
      operationId: "getEmailBlastSummary",
      summary: "Summary tiles of the blasts sent in a period",
      filters: ["ownerUserId"],
      schema: {
        querystring: { type: "object", properties: { periodDays, ownerUserId } },
        response: { 200: { $ref: "EmailBlastSummary#" } },
      },
      async handler(call, request) {
        const q = request.query as PeriodQuery & { ownerUserId?: string };
        return emailBlastSummaryJson(
          await blasts.getEmailBlastSummary(
            { periodDays: q.periodDays, ownerUserId: q.ownerUserId ?? "" },
            call.callOptions(),
          ),
        );
      },
    }),
    defineRoute({
      ...emailBlasts,
      method: "GET",
      url: "/email-blasts/top",
      operationId: "listTopEmailBlasts",
      summary: "Best-performing blasts sent in a period",
      filters: ["ownerUserId"],
      schema: {
        querystring: {
          type: "object",
          properties: {
            periodDays,
            ownerUserId,
            limit: { type: "integer", default: TOP_DEFAULT, description: `Clamped to 1..${TOP_MAX}` },
          },
        },
        response: { 200: { $ref: "TopEmailBlasts#" } },
      },
      async handler(call, request) {
        const q = request.query as PeriodQuery & { ownerUserId?: string; limit: number };
        const res = await blasts.listTopEmailBlasts(
          {
            periodDays: q.periodDays,
            ownerUserId: q.ownerUserId ?? "",
            limit: Math.min(TOP_MAX, Math.max(1, q.limit)),
          },
          call.callOptions(),
        );
        return { items: res.items.map(topEmailBlastJson) };
      },
    }),
    defineRoute({
      ...emailBlasts,
      url: "/email-blasts",
      operationId: "listEmailBlasts",
      summary: "Blasts sent in a period and blasts not sent yet",
      ...getList(blastsPage, "EmailBlastRow"),
      async handler(call, request) {
        const q = request.query as PageQuery & PeriodQuery & { ownerUserId?: string; search?: string };
        const res = await blasts.listEmailBlasts(
          {
            ...pageRequest(blastsPage.page, q),
            periodDays: q.periodDays,
            ownerUserId: q.ownerUserId ?? "",
            search: q.search ?? "",
          },
          call.callOptions(),
        );
        return pageJson(res.blasts, emailBlastRowJson, res.nextCursor);
      },
    }),
    defineRoute({
      ...emailBlasts,
      url: "/email-blasts/:blastId",
      operationId: "getEmailBlast",
      summary: "One email blast: what it is and how it performs",
      problems: ["email-blast-not-found"],
      ...getById("blastId", "blast_", "EmailBlast", async (id, call) => {
        const res = await blasts.getEmailBlast(id, call.callOptions());
        return emailBlastJson(required(res.blast, "blast"));
      }),
    }),
    defineRoute({
      ...emailBlasts,
      method: "GET",
      url: "/email-blasts/:blastId/activity",
      operationId: "getEmailBlastActivity",
      summary: "A blast's raw daily counts over a period ending today",
      ids: { blastId: "blast_" },
      schema: { querystring: periodQuery, response: { 200: { $ref: "EmailBlastActivity#" } } },
      problems: ["email-blast-not-found"],
      async handler(call, request) {
        const { blastId } = request.params as { blastId: string };
        const q = request.query as PeriodQuery;
        const res = await blasts.getEmailBlastActivity({ blastId, periodDays: q.periodDays }, call.callOptions());
        return activityJson(res.periodDays, res.items);
      },
    }),
    defineRoute({
      ...emailBlasts,
      url: "/email-blasts/:blastId/recipients",
      operationId: "listEmailBlastRecipients",
      summary: "Recipients of a blast with their engagement",
      ids: { blastId: "blast_" },
      ...getList(recipientsPage, "EmailBlastRecipient"),
      problems: ["email-blast-not-found"],
      async handler(call, request) {
        const { blastId } = request.params as { blastId: string };
        const q = request.query as PageQuery & { hasReplied?: boolean; search?: string };
        const res = await blasts.listEmailBlastRecipients(
          {
            blastId,
            ...pageRequest(recipientsPage.page, q),
            ...(q.hasReplied === undefined ? {} : { hasReplied: q.hasReplied }),
            search: q.search ?? "",
          },
          call.callOptions(),
        );
        return pageJson(res.recipients, emailBlastRecipientJson, res.nextCursor);
      },
    }),
  ];
}

/** Shared JSON schemas ($id'd) the routes above reference. */
export const schemas: readonly JsonSchema[] = analyticsResponseSchemas;
