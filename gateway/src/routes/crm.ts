import type { CallOptions } from "@connectrpc/connect";
import type { ActivityItem } from "@platform/contracts/crm";
import type { ProblemName } from "@platform/kit/problems";
import {
  accountJson,
  accountListJson,
  activityJson,
  botJson,
  chatJson,
  chunkListJson,
  contactJson,
  contactListJson,
  sinceFilter,
  transcriptJson,
  typesFilter,
} from "../mapping/crm.js";
import { defineRoute, type JsonSchema, type RouteSpec } from "../route.js";
import { str } from "../schemas/common.js";
import { crmResponseSchemas } from "../schemas/crm.js";
import { type PageQuery, pageQuery, pageRequest } from "../schemas/pagination.js";
import type { ServiceClients } from "../services.js";
import { getById, getList, pageJson, requiredFrom } from "./shared.js";

const required = requiredFrom("crm-data");

const CONTACT_SORTS = ["updatedAt", "createdAt", "lastName", "firstName"];

const accountsPage = pageQuery(["updatedAt", "createdAt", "name", "employeeCount"], "-updatedAt", {
  name: str("Case-insensitive substring of the name"),
  domain: str("Exact rootDomain, no wildcards"),
  industry: str("Exact primaryIndustry"),
});

const timelineFilters = {
  // Judged by crm-data, so an unknown type is its 400 invalid-filter.
  type: { type: "array", items: { type: "string" }, description: "meeting or email; repeatable" },
  since: str("ISO 8601; default 12 months ago"),
};
const timelinePage = pageQuery(["occurredAt"], "-occurredAt", timelineFilters);

const accountContactsPage = pageQuery(CONTACT_SORTS, "-updatedAt", {
  search: str("Case-insensitive substring of first name, last name or email"),
});

const contactsPage = pageQuery(CONTACT_SORTS, "-updatedAt", {
  search: str("Case-insensitive substring of first name, last name or email"),
  email: str("Exact primary email"),
  accountId: { type: "string", pattern: "^acct_[A-Za-z0-9]+$", description: "acct_ id" },
});

const chunksPage = pageQuery(["startTime"], "startTime", {
  language: str("ISO code"),
  speaker: str("Case-insensitive substring of the speaker"),
  hostId: { type: "string", pattern: "^usr_[A-Za-z0-9]+$", description: "usr_ id" },
});

const chatPage = pageQuery([], undefined);

const transcriptQuery: JsonSchema = {
  type: "object",
  properties: {
    startTime: { type: "number", description: "Seconds from meeting start (default 0)" },
    endTime: { type: "number", description: "Seconds from meeting start (default: the end)" },
    language: str("ISO code: only chunks of that language"),
  },
};

const TRANSCRIPT_PROBLEMS: ProblemName[] = ["meeting-not-found", "transcript-not-available", "transcript-expired"];

type TimelineQuery = PageQuery & { type?: string | string[]; since?: string };

/** Accounts, contacts, activity timelines, transcripts, chat and bot status (crm-data service): REST routes. */
export function routes(clients: ServiceClients): RouteSpec[] {
  const { accounts, contacts, transcripts } = clients.crm;

  const timeline = (query: TimelineQuery) => ({
    ...pageRequest(timelinePage.page, query),
    types: typesFilter(query.type),
    since: sinceFilter(query.since),
  });

  /**
   * The pieces of the activity timeline of an account or a contact (the same page, filters and
   * items): the owner's id from the path and the timeline query go to `list`.
   */
  function timelineOf<K extends string>(
    param: K,
    prefix: string,
    list: (
      request: Record<K, string> & ReturnType<typeof timeline>,
      options: CallOptions,
    ) => Promise<{ items: ActivityItem[]; nextCursor: string }>,
  ): Pick<RouteSpec, "method" | "tier" | "ids" | "page" | "schema" | "handler"> {
    return {
      ids: { [param]: prefix },
      ...getList(timelinePage, "ActivityItem"),
      async handler(call, request) {
        const id = { [param]: (request.params as Record<K, string>)[param] } as Record<K, string>;
        const res = await list({ ...id, ...timeline(request.query as TimelineQuery) }, call.callOptions());
        return pageJson(res.items, activityJson, res.nextCursor);
      },
    };
  }

  return [
    defineRoute({
      url: "/accounts",
      operationId: "listAccounts",
      summary: "List accounts",
      tag: "Accounts",
      scope: "accounts:read",
      ...getList(accountsPage, "AccountSummary"),
      async handler(call, request) {
        const q = request.query as PageQuery & { name?: string; domain?: string; industry?: string };
        const res = await accounts.listAccounts(
          {
            ...pageRequest(accountsPage.page, q),
            name: q.name ?? "",
            domain: q.domain ?? "",
            industry: q.industry ?? "",
          },
          call.callOptions(),
        );
        return pageJson(res.accounts, accountListJson, res.nextCursor);
      },
    }),
    defineRoute({
      url: "/accounts/:accountId",
      operationId: "getAccount",
      summary: "One account (detail view)",
      tag: "Accounts",
      scope: "accounts:read",
      problems: ["account-not-found"],
      ...getById("accountId", "acct_", "Account", async (id, call) => {
        const res = await accounts.getAccount(id, call.callOptions());
        return accountJson(required(res.account, "account"));
      }),
    }),
    defineRoute({
      url: "/accounts/:accountId/activity",
      operationId: "listAccountActivity",
      summary: "Activity timeline of an account (its contacts' meetings and emails)",
      tag: "Accounts",
      scope: "accounts:read",
      problems: ["account-not-found"],
      ...timelineOf("accountId", "acct_", (req, options) => accounts.listAccountActivity(req, options)),
    }),
    defineRoute({
      url: "/accounts/:accountId/contacts",
      operationId: "listAccountContacts",
      summary: "Contacts of one account",
      tag: "Accounts",
      // accounts:read is checked first, so a token lacking it is always told accounts:read (the
      // spec's rule), also when it lacks contacts:read too.
      scope: ["accounts:read", "contacts:read"],
      ids: { accountId: "acct_" },
      ...getList(accountContactsPage, "ContactSummary"),
      problems: ["account-not-found"],
      async handler(call, request) {
        const { accountId } = request.params as { accountId: string };
        const q = request.query as PageQuery & { search?: string };
        const res = await accounts.listAccountContacts(
          { accountId, ...pageRequest(accountContactsPage.page, q), search: q.search ?? "" },
          call.callOptions(),
        );
        return pageJson(res.contacts, contactListJson, res.nextCursor);
      },
    }),
    defineRoute({
      url: "/contacts",
      operationId: "listContacts",
      summary: "List contacts",
      tag: "Contacts",
      scope: "contacts:read",
      ...getList(contactsPage, "ContactSummary"),
      async handler(call, request) {
        const q = request.query as PageQuery & { search?: string; email?: string; accountId?: string };
        const res = await contacts.listContacts(
          {
            ...pageRequest(contactsPage.page, q),
            search: q.search ?? "",
            email: q.email ?? "",
            accountId: q.accountId ?? "",
          },
          call.callOptions(),
        );
        return pageJson(res.contacts, contactListJson, res.nextCursor);
      },
    }),
    defineRoute({
      url: "/contacts/:contactId",
      operationId: "getContact",
      summary: "One contact (detail view)",
      tag: "Contacts",
      scope: "contacts:read",
      problems: ["contact-not-found"],
      ...getById("contactId", "cont_", "Contact", async (id, call) => {
        const res = await contacts.getContact(id, call.callOptions());
        return contactJson(required(res.contact, "contact"));
      }),
    }),
    defineRoute({
      url: "/contacts/:contactId/activity",
      operationId: "listContactActivity",
      summary: "Activity timeline of a contact",
      tag: "Contacts",
      scope: "contacts:read",
      problems: ["contact-not-found"],
      ...timelineOf("contactId", "cont_", (req, options) => contacts.listContactActivity(req, options)),
    }),
    defineRoute({
      method: "GET",
      url: "/scheduled-meetings/:meetingId/transcript",
      operationId: "getTranscript",
      summary: "Transcript of a meeting, optionally a time window and one language",
      tag: "Transcripts",
      scope: "transcripts:read",
      tier: "read",
      ids: { meetingId: "mtg_" },
      schema: { querystring: transcriptQuery, response: { 200: { $ref: "Transcript#" } } },
      problems: [...TRANSCRIPT_PROBLEMS, "transcript-window-invalid"],
      async handler(call, request) {
        const { meetingId } = request.params as { meetingId: string };
        const q = request.query as { startTime?: number; endTime?: number; language?: string };
        const res = await transcripts.getTranscript(
          { meetingId, startTime: q.startTime, endTime: q.endTime, language: q.language ?? "" },
          call.callOptions(),
        );
        return transcriptJson(required(res.transcript, "transcript"));
      },
    }),
    defineRoute({
      url: "/scheduled-meetings/:meetingId/transcript/chunks",
      operationId: "listTranscriptChunks",
      summary: "Transcript chunks without words",
      tag: "Transcripts",
      scope: "transcripts:read",
      ids: { meetingId: "mtg_" },
      ...getList(chunksPage, "TranscriptChunkSummary"),
      problems: TRANSCRIPT_PROBLEMS,
      async handler(call, request) {
        const { meetingId } = request.params as { meetingId: string };
        const q = request.query as PageQuery & { language?: string; speaker?: string; hostId?: string };
        const res = await transcripts.listTranscriptChunks(
          {
            meetingId,
            ...pageRequest(chunksPage.page, q),
            language: q.language ?? "",
            speaker: q.speaker ?? "",
            hostId: q.hostId ?? "",
          },
          call.callOptions(),
        );
        return pageJson(res.chunks, chunkListJson, res.nextCursor);
      },
    }),
    defineRoute({
      url: "/scheduled-meetings/:meetingId/chat",
      operationId: "listChatMessages",
      summary: "Chat messages of a meeting, oldest first",
      tag: "Transcripts",
      scope: "transcripts:read",
      ids: { meetingId: "mtg_" },
      ...getList(chatPage, "ChatMessage"),
      problems: TRANSCRIPT_PROBLEMS,
      async handler(call, request) {
        const { meetingId } = request.params as { meetingId: string };
        const res = await transcripts.listChatMessages(
          { meetingId, ...pageRequest(chatPage.page, request.query as PageQuery) },
          call.callOptions(),
        );
        return pageJson(res.messages, chatJson, res.nextCursor);
      },
    }),
    defineRoute({
      url: "/scheduled-meetings/:meetingId/bot",
      operationId: "getRecordingBot",
      summary: "Recording-bot status",
      tag: "Transcripts",
      scope: "transcripts:read",
      problems: ["meeting-not-found", "bot-not-configured"],
      ...getById("meetingId", "mtg_", "BotStatus", async (id, call) => {
        const res = await transcripts.getBotStatus(id, call.callOptions());
        return botJson(required(res.bot, "bot status"));
      }),
    }),
  ];
}

/** Shared JSON schemas ($id'd) the routes above reference. */
export const schemas: readonly JsonSchema[] = crmResponseSchemas;
