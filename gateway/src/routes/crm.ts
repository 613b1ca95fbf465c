import type { Timestamp } from "@bufbuild/protobuf/wkt";
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
import { defineRoute, type RouteSpec } from "../route.js";
import { type JsonSchema, str } from "../schemas/common.js";
import { crmResponseSchemas } from "../schemas/crm.js";
import { type PageRequest, pageQuery } from "../schemas/pagination.js";
import type { ServiceClients } from "../services.js";
import { getById, listOf, readerFrom, requiredFrom, textFilters } from "./shared.js";

const required = requiredFrom("crm-data");
const read = readerFrom("crm-data");

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

type TimelineQuery = { type?: string | string[]; since?: string };

/** Accounts, contacts, activity timelines, transcripts, chat and bot status (crm-data service): REST routes. */
export function routes(clients: ServiceClients): RouteSpec[] {
  const { accounts, contacts, transcripts } = clients.crm;

  /**
   * The pieces of the activity timeline of an account or a contact (the same page, filters and
   * items): the owner's id from the path and the timeline's filters go to `list`.
   */
  function timelineOf<K extends string>(
    ids: Record<K, string>,
    list: (
      request: Record<K, string> & PageRequest & { types: string[]; since: Timestamp | undefined },
      options: CallOptions,
    ) => Promise<{ items: ActivityItem[]; nextCursor: string }>,
  ) {
    return listOf(timelinePage, "ActivityItem", {
      ids,
      list: (page, q: TimelineQuery, options) =>
        list({ ...page, types: typesFilter(q.type), since: sinceFilter(q.since) }, options),
      items: (res) => res.items,
      toJson: activityJson,
    });
  }

  return [
    defineRoute({
      url: "/accounts",
      operationId: "listAccounts",
      summary: "List accounts",
      tag: "Accounts",
      scope: "accounts:read",
      ...listOf(accountsPage, "AccountSummary", {
        list: (page, q: { name?: string; domain?: string; industry?: string }, options) =>
          accounts.listAccounts({ ...page, ...textFilters(q, "name", "domain", "industry") }, options),
        items: (res) => res.accounts,
        toJson: accountListJson,
      }),
    }),
    defineRoute({
      url: "/accounts/:accountId",
      operationId: "getAccount",
      summary: "One account (detail view)",
      tag: "Accounts",
      scope: "accounts:read",
      problems: ["account-not-found"],
      ...getById("accountId", "acct_", "Account", read(accounts.getAccount, "account", accountJson)),
    }),
    defineRoute({
      url: "/accounts/:accountId/activity",
      operationId: "listAccountActivity",
      summary: "Activity timeline of an account (its contacts' meetings and emails)",
      tag: "Accounts",
      scope: "accounts:read",
      problems: ["account-not-found"],
      ...timelineOf({ accountId: "acct_" }, (req, options) => accounts.listAccountActivity(req, options)),
    }),
    defineRoute({
      url: "/accounts/:accountId/contacts",
      operationId: "listAccountContacts",
      summary: "Contacts of one account",
      tag: "Accounts",
      // accounts:read is checked first, so a token lacking it is always told accounts:read (the
      // spec's rule), also when it lacks contacts:read too.
      scope: ["accounts:read", "contacts:read"],
      problems: ["account-not-found"],
      ...listOf(accountContactsPage, "ContactSummary", {
        ids: { accountId: "acct_" },
        list: (page, q: { search?: string }, options) =>
          accounts.listAccountContacts({ ...page, ...textFilters(q, "search") }, options),
        items: (res) => res.contacts,
        toJson: contactListJson,
      }),
    }),
    defineRoute({
      url: "/contacts",
      operationId: "listContacts",
      summary: "List contacts",
      tag: "Contacts",
      scope: "contacts:read",
      ...listOf(contactsPage, "ContactSummary", {
        list: (page, q: { search?: string; email?: string; accountId?: string }, options) =>
          contacts.listContacts({ ...page, ...textFilters(q, "search", "email", "accountId") }, options),
        items: (res) => res.contacts,
        toJson: contactListJson,
      }),
    }),
    defineRoute({
      url: "/contacts/:contactId",
      operationId: "getContact",
      summary: "One contact (detail view)",
      tag: "Contacts",
      scope: "contacts:read",
      problems: ["contact-not-found"],
      ...getById("contactId", "cont_", "Contact", read(contacts.getContact, "contact", contactJson)),
    }),
    defineRoute({
      url: "/contacts/:contactId/activity",
      operationId: "listContactActivity",
      summary: "Activity timeline of a contact",
      tag: "Contacts",
      scope: "contacts:read",
      problems: ["contact-not-found"],
      ...timelineOf({ contactId: "cont_" }, (req, options) => contacts.listContactActivity(req, options)),
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
      problems: TRANSCRIPT_PROBLEMS,
      ...listOf(chunksPage, "TranscriptChunkSummary", {
        ids: { meetingId: "mtg_" },
        list: (page, q: { language?: string; speaker?: string; hostId?: string }, options) =>
          transcripts.listTranscriptChunks({ ...page, ...textFilters(q, "language", "speaker", "hostId") }, options),
        items: (res) => res.chunks,
        toJson: chunkListJson,
      }),
    }),
    defineRoute({
      url: "/scheduled-meetings/:meetingId/chat",
      operationId: "listChatMessages",
      summary: "Chat messages of a meeting, oldest first",
      tag: "Transcripts",
      scope: "transcripts:read",
      problems: TRANSCRIPT_PROBLEMS,
      ...listOf(chatPage, "ChatMessage", {
        ids: { meetingId: "mtg_" },
        list: (page, _q: object, options) => transcripts.listChatMessages(page, options),
        items: (res) => res.messages,
        toJson: chatJson,
      }),
    }),
    defineRoute({
      url: "/scheduled-meetings/:meetingId/bot",
      operationId: "getRecordingBot",
      summary: "Recording-bot status",
      tag: "Transcripts",
      scope: "transcripts:read",
      problems: ["meeting-not-found", "bot-not-configured"],
      ...getById("meetingId", "mtg_", "BotStatus", read(transcripts.getBotStatus, "bot", botJson, "bot status")),
    }),
  ];
}

/** Shared JSON schemas ($id'd) the routes above reference. */
export const schemas: readonly JsonSchema[] = crmResponseSchemas;
