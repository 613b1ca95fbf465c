import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { problem } from "@platform/kit/problems";
import { accountJson, activityJson, contactListJson } from "../mapping/crm.js";
import { dealListItemJson } from "../mapping/revenue.js";
import { parseInstant } from "../mapping/time.js";
import { defineRoute, type RouteDeps, type RouteSpec } from "../route.js";
import type { JsonSchema } from "../schemas/common.js";
import type { ServiceClients } from "../services.js";
import { requiredFrom } from "./shared.js";

const required = requiredFrom("crm-data");

// Responses that span bounded contexts, composed by the gateway (API composition,
// docs/architecture.md): each part comes from the context that owns it, over its own RPCs.

const BUNDLE_DAYS = 90;
const DAY_MS = 86_400_000;

/** The spec's caps of the related bundle: default and maximum per part. */
const CAPS = {
  contactsLimit: { default: 20, max: 100 },
  dealsLimit: { default: 20, max: 100 },
  activityLimit: { default: 10, max: 50 },
} as const;

const capQuery = (name: keyof typeof CAPS, what: string) => ({
  type: "integer",
  default: CAPS[name].default,
  description: `${what}: default ${CAPS[name].default}, clamped to 1..${CAPS[name].max}`,
});

const relatedQuery: JsonSchema = {
  type: "object",
  properties: {
    contactsLimit: capQuery("contactsLimit", "Contacts"),
    dealsLimit: capQuery("dealsLimit", "Deals"),
    activityLimit: capQuery("activityLimit", "Activity items"),
    activitySince: { type: "string", description: `ISO 8601; default ${BUNDLE_DAYS} days ago` },
  },
};

const part = (items: string) => ({
  type: "object",
  required: ["items", "hasMore"],
  properties: { items: { type: "array", items: { $ref: `${items}#` } }, hasMore: { type: "boolean" } },
});

export const accountRelatedSchema: JsonSchema = {
  $id: "AccountRelated",
  type: "object",
  description: "An account with its contacts, deals and recent activity, each capped; hasMore tells that more exist",
  required: ["account", "contacts", "deals", "recentActivity"],
  properties: {
    account: { $ref: "Account#" },
    contacts: part("ContactSummary"),
    deals: part("DealListItem"),
    recentActivity: part("ActivityItem"),
  },
};

const clamp = (name: keyof typeof CAPS, raw: number | undefined) =>
  Math.min(CAPS[name].max, Math.max(1, raw ?? CAPS[name].default));

type RelatedQuery = Partial<Record<keyof typeof CAPS, number>> & { activitySince?: string };

export function routes(clients: ServiceClients, { clock }: RouteDeps): RouteSpec[] {
  const { accounts } = clients.crm;
  const { deals } = clients.revenue;
  return [
    defineRoute({
      method: "GET",
      url: "/accounts/:accountId/related",
      operationId: "getAccountRelated",
      summary: "Account with its contacts, deals and recent activity (composed from crm-data and revenue)",
      tag: "Accounts",
      scope: "accounts:read",
      tier: "read",
      ids: { accountId: "acct_" },
      schema: { querystring: relatedQuery, response: { 200: { $ref: "AccountRelated#" } } },
      problems: ["account-not-found", "invalid-field", "invalid-filter"],
      async handler(call, request) {
        const { accountId } = request.params as { accountId: string };
        const q = request.query as RelatedQuery;
        const since =
          q.activitySince === undefined
            ? timestampFromDate(new Date(clock.now().getTime() - BUNDLE_DAYS * DAY_MS))
            : parseInstant(q.activitySince, { allowDate: true });
        if (!since) {
          // The same problem as the timelines' `since`: it is the same filter.
          throw problem("invalid-filter", "activitySince must be an ISO 8601 date-time with a zone, or a date.", {
            field: "activitySince",
          });
        }
        // The account first: an unknown or foreign id is its 404 before anything else is asked.
        const account = required((await accounts.getAccount({ accountId }, call.callOptions())).account, "account");
        const [contactPage, dealPage, activityPage] = await Promise.all([
          accounts.listAccountContacts(
            { accountId, limit: clamp("contactsLimit", q.contactsLimit), sort: "-updatedAt" },
            call.callOptions(),
          ),
          deals.listDeals(
            { limit: clamp("dealsLimit", q.dealsLimit), sort: "-updatedAt", filter: { accountId } },
            call.callOptions(),
          ),
          accounts.listAccountActivity(
            { accountId, limit: clamp("activityLimit", q.activityLimit), sort: "-occurredAt", since },
            call.callOptions(),
          ),
        ]);
        return {
          account: accountJson(account),
          contacts: { items: contactPage.contacts.map(contactListJson), hasMore: contactPage.nextCursor !== "" },
          deals: { items: dealPage.deals.map(dealListItemJson), hasMore: dealPage.nextCursor !== "" },
          recentActivity: { items: activityPage.items.map(activityJson), hasMore: activityPage.nextCursor !== "" },
        };
      },
    }),
  ];
}

export const schemas: readonly JsonSchema[] = [accountRelatedSchema];
