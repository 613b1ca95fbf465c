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
import { defineRoute, type RouteSpec } from "../route.js";
import { analyticsResponseSchemas, ownerUserId, periodDays } from "../schemas/analytics.js";
import { type JsonSchema, str } from "../schemas/common.js";
import { pageQuery } from "../schemas/pagination.js";
import type { ServiceClients } from "../services.js";
import { getById, listOf, readerFrom, textFilters } from "./shared.js";

const read = readerFrom("analytics");

const hasReplied = { type: "boolean", description: "Only recipients who replied (true) or did not (false)" };
type HasRepliedQuery = { hasReplied?: boolean };
/** The hasReplied filter as the RPCs take it: absent, both kinds of recipient. */
const hasRepliedFilter = (q: HasRepliedQuery) => (q.hasReplied === undefined ? {} : { hasReplied: q.hasReplied });

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
      ...listOf(sentEmailsPage, "SentEmail", {
        list: (page, q: PeriodQuery & { search?: string; emailType: string }, options) =>
          signals.listSentEmails(
            { ...page, periodDays: q.periodDays, ...textFilters(q, "search"), emailType: q.emailType },
            options,
          ),
        items: (res) => res.sentEmails,
        toJson: sentEmailJson,
      }),
    }),
    defineRoute({
      ...buyerSignals,
      url: "/buyer-signals/sent-emails/:sentEmailId",
      operationId: "getSentEmail",
      summary: "One sent email",
      problems: ["sent-email-not-found"],
      ...getById(
        "sentEmailId",
        "semail_",
        "SentEmail",
        read(signals.getSentEmail, "sentEmail", sentEmailJson, "sent email"),
      ),
    }),
    defineRoute({
      ...buyerSignals,
      url: "/buyer-signals/sent-emails/:sentEmailId/signals",
      operationId: "listSentEmailSignals",
      summary: "Per-recipient signals of a sent email",
      problems: ["sent-email-not-found"],
      ...listOf(signalsPage, "RecipientSignal", {
        ids: { sentEmailId: "semail_" },
        list: (page, q: HasRepliedQuery, options) =>
          signals.listSentEmailSignals({ ...page, ...hasRepliedFilter(q) }, options),
        items: (res) => res.signals,
        toJson: recipientSignalJson,
      }),
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
      ...listOf(blastsPage, "EmailBlastRow", {
        list: (page, q: PeriodQuery & { ownerUserId?: string; search?: string }, options) =>
          blasts.listEmailBlasts(
            { ...page, periodDays: q.periodDays, ...textFilters(q, "ownerUserId", "search") },
            options,
          ),
        items: (res) => res.blasts,
        toJson: emailBlastRowJson,
      }),
    }),
    defineRoute({
      ...emailBlasts,
      url: "/email-blasts/:blastId",
      operationId: "getEmailBlast",
      summary: "One email blast: what it is and how it performs",
      problems: ["email-blast-not-found"],
      ...getById("blastId", "blast_", "EmailBlast", read(blasts.getEmailBlast, "blast", emailBlastJson)),
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
      problems: ["email-blast-not-found"],
      ...listOf(recipientsPage, "EmailBlastRecipient", {
        ids: { blastId: "blast_" },
        list: (page, q: HasRepliedQuery & { search?: string }, options) =>
          blasts.listEmailBlastRecipients({ ...page, ...hasRepliedFilter(q), ...textFilters(q, "search") }, options),
        items: (res) => res.recipients,
        toJson: emailBlastRecipientJson,
      }),
    }),
  ];
}

/** Shared JSON schemas ($id'd) the routes above reference. */
export const schemas: readonly JsonSchema[] = analyticsResponseSchemas;
