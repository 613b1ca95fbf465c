import { problem } from "@platform/kit/problems";
import type { Scope } from "@platform/kit/scopes";
import { API_PREFIX, type JsonSchema, type RouteSpec } from "../route.js";
import { type PageSpec, pageQuery } from "../schemas/pagination.js";

/**
 * Endpoints the spec announces that no service serves yet. They pass the whole guard (API
 * key, delegation, scope, rate limit, path ids, Idempotency-Key, query schema) and then
 * answer 501 not-implemented. Each entry is replaced by a real route when its service lands.
 */
type Announced = Pick<RouteSpec, "url" | "operationId" | "summary" | "ids" | "actingOn"> &
  Partial<Pick<RouteSpec, "readOnlyTokenProblem" | "problems">> & {
    method: RouteSpec["method"];
    scope: Scope | readonly Scope[];
    idempotencyKey?: "required";
    query?: JsonSchema;
    page?: PageSpec;
  };

const str = (description?: string) => ({ type: "string", ...(description ? { description } : {}) });
const bool = { type: "boolean" };
const periodDays = { type: "integer", enum: [7, 14, 30], default: 7, description: "Days to look back" };
const periodQuery = { type: "object", properties: { periodDays } };

const INSIGHT_PREFIXES = ["prof_", "prob_", "pain_", "powr_", "posn_", "phas_", "proc_", "plan_"] as const;

const SECTIONS: Record<string, Announced[]> = {
  Transcripts: [
    {
      method: "GET",
      url: "/scheduled-meetings/:meetingId/transcript",
      operationId: "getTranscript",
      summary: "Transcript of a meeting, optionally a time window",
      scope: "transcripts:read",
      ids: { meetingId: "mtg_" },
      query: {
        type: "object",
        properties: { startTime: { type: "number" }, endTime: { type: "number" }, language: str() },
      },
    },
    {
      method: "GET",
      url: "/scheduled-meetings/:meetingId/transcript/chunks",
      operationId: "listTranscriptChunks",
      summary: "Transcript chunks without words",
      scope: "transcripts:read",
      ids: { meetingId: "mtg_" },
      ...pageQuery(["startTime"], "startTime", { language: str(), speaker: str(), hostId: str("usr_ id") }),
    },
    {
      method: "GET",
      url: "/scheduled-meetings/:meetingId/chat",
      operationId: "listChatMessages",
      summary: "Chat messages of a meeting",
      scope: "transcripts:read",
      ids: { meetingId: "mtg_" },
      ...pageQuery([], undefined),
    },
    {
      method: "GET",
      url: "/scheduled-meetings/:meetingId/bot",
      operationId: "getRecordingBot",
      summary: "Recording-bot status",
      scope: "transcripts:read",
      ids: { meetingId: "mtg_" },
    },
  ],
  Deals: [
    {
      method: "GET",
      url: "/deals",
      operationId: "listDeals",
      summary: "List deals",
      scope: "deals:read",
      ...pageQuery(["updatedAt", "createdAt", "name", "closeDate", "amount"], "-updatedAt", {
        search: str(),
        accountId: str("acct_ id"),
        stage: { type: "array", items: { type: "string" } },
        owner: str("usr_ id"),
        closingBefore: { type: "string", format: "date" },
        closingAfter: { type: "string", format: "date" },
      }),
    },
    {
      method: "GET",
      url: "/deals/by-source",
      operationId: "getDealBySource",
      summary: "One deal by its external reference",
      scope: "deals:read",
      query: {
        type: "object",
        required: ["sourceType", "sourceId"],
        properties: { sourceType: { type: "string", enum: ["crm"] }, sourceId: str("Raw external id") },
      },
    },
    {
      method: "GET",
      url: "/deals/:dealId",
      operationId: "getDeal",
      summary: "One deal",
      scope: "deals:read",
      ids: { dealId: "deal_" },
    },
    {
      method: "POST",
      url: "/deals",
      operationId: "createDeal",
      summary: "Create a deal",
      scope: "deals:write",
      idempotencyKey: "required",
    },
    {
      method: "PATCH",
      url: "/deals/:dealId",
      operationId: "updateDeal",
      summary: "Update a deal (customFields merge)",
      scope: "deals:write",
      idempotencyKey: "required",
      ids: { dealId: "deal_" },
    },
    {
      method: "GET",
      url: "/deals/:dealId/meetings",
      operationId: "listDealMeetings",
      summary: "Meetings linked to a deal",
      scope: "deals:read",
      ids: { dealId: "deal_" },
      ...pageQuery(["startTime"], "-startTime", { since: { type: "string", format: "date-time" } }),
    },
    {
      method: "GET",
      url: "/accounts/:accountId/deals",
      operationId: "listAccountDeals",
      summary: "Deals of one account",
      scope: ["deals:read", "accounts:read"],
      ids: { accountId: "acct_" },
      ...pageQuery(["updatedAt", "createdAt", "name", "closeDate", "amount"], "-updatedAt"),
    },
  ],
  "Q&As": [
    {
      method: "GET",
      url: "/deals/:dealId/qnas",
      operationId: "getQnaBacklog",
      summary: "Q&A backlog of a deal in six buckets",
      scope: "qna:read",
      ids: { dealId: "deal_" },
    },
    {
      method: "GET",
      url: "/deals/:dealId/qnas/meetings/:meetingId",
      operationId: "getQnaBacklogForMeeting",
      summary: "Q&A backlog filtered to one meeting",
      scope: "qna:read",
      ids: { dealId: "deal_", meetingId: "mtg_" },
    },
    {
      method: "GET",
      url: "/qnas/:qnaId",
      operationId: "getQna",
      summary: "One Q&A item",
      scope: "qna:read",
      ids: { qnaId: "qna_" },
    },
    {
      method: "POST",
      url: "/deals/:dealId/qnas",
      operationId: "createQna",
      summary: "Create a Q&A item",
      scope: "qna:write",
      idempotencyKey: "required",
      ids: { dealId: "deal_" },
    },
    {
      method: "POST",
      url: "/qnas/:qnaId/answer",
      operationId: "answerQna",
      summary: "Attach an answer",
      scope: "qna:write",
      idempotencyKey: "required",
      ids: { qnaId: "qna_" },
    },
    {
      method: "POST",
      url: "/qnas/:qnaId/transitions/:targetState",
      operationId: "transitionQna",
      summary: "Move a Q&A item to open, answered or dismissed",
      scope: "qna:write",
      idempotencyKey: "required",
      ids: { qnaId: "qna_" },
    },
  ],
  "8P insights": [
    {
      method: "GET",
      url: "/deals/:dealId/insights",
      operationId: "listDealInsights",
      summary: "All eight insight records of a deal",
      scope: "insights:read",
      ids: { dealId: "deal_" },
    },
    {
      method: "GET",
      url: "/deals/:dealId/insights/:schemaType",
      operationId: "getDealInsight",
      summary: "One insight record of a deal",
      scope: "insights:read",
      ids: { dealId: "deal_" },
    },
    {
      method: "GET",
      url: "/insights/:insightId",
      operationId: "getInsight",
      summary: "One insight record by its 8P id",
      scope: "insights:read",
      ids: { insightId: INSIGHT_PREFIXES },
    },
    {
      method: "POST",
      url: "/deals/:dealId/insights/:schemaType",
      operationId: "createDealInsight",
      summary: "Create an insight record",
      scope: "insights:write",
      idempotencyKey: "required",
      ids: { dealId: "deal_" },
    },
    {
      method: "POST",
      url: "/deals/:dealId/insights/:schemaType/fields/:fieldKey",
      operationId: "appendInsightItem",
      summary: "Append an item to an insight field",
      scope: "insights:write",
      idempotencyKey: "required",
      ids: { dealId: "deal_" },
    },
  ],
  Accounts: [
    {
      method: "GET",
      url: "/accounts",
      operationId: "listAccounts",
      summary: "List accounts",
      scope: "accounts:read",
      ...pageQuery(["updatedAt", "createdAt", "name", "employeeCount"], "-updatedAt", {
        name: str(),
        domain: str("Exact rootDomain"),
        industry: str("Exact primaryIndustry"),
      }),
    },
    {
      method: "GET",
      url: "/accounts/:accountId",
      operationId: "getAccount",
      summary: "One account",
      scope: "accounts:read",
      ids: { accountId: "acct_" },
    },
    {
      method: "GET",
      url: "/accounts/:accountId/related",
      operationId: "getAccountRelated",
      summary: "Account with its contacts, deals and recent activity",
      scope: "accounts:read",
      ids: { accountId: "acct_" },
      query: {
        type: "object",
        properties: {
          contactsLimit: { type: "integer", default: 20 },
          dealsLimit: { type: "integer", default: 20 },
          activityLimit: { type: "integer", default: 10 },
          activitySince: { type: "string", format: "date-time" },
        },
      },
    },
    {
      method: "GET",
      url: "/accounts/:accountId/activity",
      operationId: "listAccountActivity",
      summary: "Activity timeline of an account",
      scope: "accounts:read",
      ids: { accountId: "acct_" },
      ...pageQuery(["occurredAt"], "-occurredAt", {
        type: { type: "array", items: { type: "string", enum: ["meeting", "email"] } },
        since: { type: "string", format: "date-time" },
      }),
    },
    {
      method: "GET",
      url: "/accounts/:accountId/contacts",
      operationId: "listAccountContacts",
      summary: "Contacts of one account",
      scope: ["contacts:read", "accounts:read"],
      ids: { accountId: "acct_" },
      ...pageQuery(["updatedAt", "createdAt", "lastName", "firstName"], "-updatedAt", { search: str() }),
    },
  ],
  Contacts: [
    {
      method: "GET",
      url: "/contacts",
      operationId: "listContacts",
      summary: "List contacts",
      scope: "contacts:read",
      ...pageQuery(["updatedAt", "createdAt", "lastName", "firstName"], "-updatedAt", {
        search: str(),
        email: str("Exact primary email"),
        accountId: str("acct_ id"),
      }),
    },
    {
      method: "GET",
      url: "/contacts/:contactId",
      operationId: "getContact",
      summary: "One contact",
      scope: "contacts:read",
      ids: { contactId: "cont_" },
    },
    {
      method: "GET",
      url: "/contacts/:contactId/activity",
      operationId: "listContactActivity",
      summary: "Activity timeline of a contact",
      scope: "contacts:read",
      ids: { contactId: "cont_" },
      ...pageQuery(["occurredAt"], "-occurredAt", {
        type: { type: "array", items: { type: "string", enum: ["meeting", "email"] } },
        since: { type: "string", format: "date-time" },
      }),
    },
  ],
  "Buyer signals": [
    {
      method: "GET",
      url: "/buyer-signals/summary",
      operationId: "getBuyerSignalsSummary",
      summary: "Email engagement summary",
      scope: "buyer-signals:read",
      query: periodQuery,
    },
    {
      method: "GET",
      url: "/buyer-signals/activity",
      operationId: "getBuyerSignalsActivity",
      summary: "Daily engagement counts",
      scope: "buyer-signals:read",
      query: {
        type: "object",
        properties: {
          periodDays,
          action: { type: "array", items: { type: "string", enum: ["sends", "opens", "clicks", "replies"] } },
        },
      },
    },
    {
      method: "GET",
      url: "/buyer-signals/sent-emails",
      operationId: "listSentEmails",
      summary: "Sent emails with their engagement",
      scope: "buyer-signals:read",
      ...pageQuery(["sentAt", "lastReplyAt", "lastOpenAt", "lastClickAt", "replies", "opens", "clicks"], "-sentAt", {
        periodDays,
        search: str(),
        emailType: { type: "string", enum: ["standard", "email-blast", "all"], default: "all" },
      }),
    },
    {
      method: "GET",
      url: "/buyer-signals/sent-emails/:sentEmailId",
      operationId: "getSentEmail",
      summary: "One sent email",
      scope: "buyer-signals:read",
      ids: { sentEmailId: "semail_" },
    },
    {
      method: "GET",
      url: "/buyer-signals/sent-emails/:sentEmailId/signals",
      operationId: "listSentEmailSignals",
      summary: "Per-recipient signals of a sent email",
      scope: "buyer-signals:read",
      ids: { sentEmailId: "semail_" },
      ...pageQuery(["lastReplyAt", "lastOpenAt", "replies", "opens"], "-lastReplyAt", { hasReplied: bool }),
    },
  ],
  "Email blasts": [
    {
      method: "GET",
      url: "/email-blasts/summary",
      operationId: "getEmailBlastSummary",
      summary: "Email blast summary tiles",
      scope: "email-blasts:read",
      query: { type: "object", properties: { periodDays, ownerUserId: str("usr_ id") } },
    },
    {
      method: "GET",
      url: "/email-blasts/top",
      operationId: "listTopEmailBlasts",
      summary: "Best-performing email blasts",
      scope: "email-blasts:read",
      query: {
        type: "object",
        properties: {
          periodDays,
          ownerUserId: str("usr_ id"),
          limit: { type: "integer", default: 5, description: "Clamped to 1..20" },
        },
      },
    },
    {
      method: "GET",
      url: "/email-blasts",
      operationId: "listEmailBlasts",
      summary: "List email blasts",
      scope: "email-blasts:read",
      ...pageQuery(["sentAt", "openRate", "clickRate", "replyRate", "engagementScore", "recipientCount"], "-sentAt", {
        periodDays,
        ownerUserId: str("usr_ id"),
        search: str(),
      }),
    },
    {
      method: "GET",
      url: "/email-blasts/:blastId",
      operationId: "getEmailBlast",
      summary: "One email blast",
      scope: "email-blasts:read",
      ids: { blastId: "blast_" },
    },
    {
      method: "GET",
      url: "/email-blasts/:blastId/activity",
      operationId: "getEmailBlastActivity",
      summary: "Daily engagement of an email blast",
      scope: "email-blasts:read",
      ids: { blastId: "blast_" },
      query: periodQuery,
    },
    {
      method: "GET",
      url: "/email-blasts/:blastId/recipients",
      operationId: "listEmailBlastRecipients",
      summary: "Recipients of an email blast",
      scope: "email-blasts:read",
      ids: { blastId: "blast_" },
      ...pageQuery(["lastReplyAt", "lastOpenAt", "replies", "opens", "sentAt"], "-lastOpenAt", {
        hasReplied: bool,
        search: str(),
      }),
    },
  ],
  "Webhook subscriptions": [
    {
      method: "GET",
      url: "/webhook-subscriptions",
      operationId: "listWebhookSubscriptions",
      summary: "List webhook subscriptions",
      scope: "webhooks:read",
      ...pageQuery([], undefined),
    },
    {
      method: "POST",
      url: "/webhook-subscriptions",
      operationId: "createWebhookSubscription",
      summary: "Create a webhook subscription",
      scope: "webhooks:write",
    },
    {
      method: "GET",
      url: "/webhook-subscriptions/:subscriptionId",
      operationId: "getWebhookSubscription",
      summary: "One webhook subscription",
      scope: "webhooks:read",
      ids: { subscriptionId: "sub_" },
    },
    {
      method: "PATCH",
      url: "/webhook-subscriptions/:subscriptionId",
      operationId: "updateWebhookSubscription",
      summary: "Update a webhook subscription",
      scope: "webhooks:write",
      ids: { subscriptionId: "sub_" },
    },
    {
      method: "DELETE",
      url: "/webhook-subscriptions/:subscriptionId",
      operationId: "deleteWebhookSubscription",
      summary: "Delete a webhook subscription",
      scope: "webhooks:write",
      ids: { subscriptionId: "sub_" },
    },
    {
      method: "POST",
      url: "/webhook-subscriptions/:subscriptionId/rotate-secret",
      operationId: "rotateWebhookSecret",
      summary: "Rotate the signing secret",
      scope: "webhooks:write",
      ids: { subscriptionId: "sub_" },
    },
    {
      method: "POST",
      url: "/webhook-subscriptions/:subscriptionId/test",
      operationId: "testWebhookSubscription",
      summary: "Send a test delivery",
      scope: "webhooks:write",
      ids: { subscriptionId: "sub_" },
    },
    {
      method: "GET",
      url: "/webhook-subscriptions/:subscriptionId/deliveries",
      operationId: "listWebhookDeliveries",
      summary: "Delivery attempts of a subscription",
      scope: "webhooks:read",
      ids: { subscriptionId: "sub_" },
      ...pageQuery([], undefined),
    },
    {
      method: "POST",
      url: "/webhook-subscriptions/:subscriptionId/deliveries/:deliveryId/redeliver",
      operationId: "redeliverWebhook",
      summary: "Redeliver one delivery attempt",
      scope: "webhooks:write",
      ids: { subscriptionId: "sub_", deliveryId: "wd_" },
    },
  ],
};

function toRoute(tag: string, a: Announced): RouteSpec {
  const { query, ...rest } = a;
  return {
    ...rest,
    tag,
    // None of them is an availability search: GET reads, every other method writes.
    tier: a.method === "GET" ? "read" : "write",
    schema: query ? { querystring: query } : {},
    problems: [...(a.problems ?? []), "not-implemented"],
    async handler() {
      throw problem("not-implemented", `${a.method} ${API_PREFIX}${a.url} is announced but not available yet.`);
    },
  };
}

export const announcedRoutes: RouteSpec[] = Object.entries(SECTIONS).flatMap(([tag, entries]) =>
  entries.map((a) => toRoute(tag, a)),
);
