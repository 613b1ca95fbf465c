/**
 * The OpenAPI document's top-level tags: one per section of the API, in the order a reader
 * meets them. Every tag a route (or the `webhooks` section) uses must be described here;
 * the OpenAPI test checks it.
 */
export const OPENAPI_TAGS: readonly { name: string; description: string }[] = [
  {
    name: "Organizations",
    description: "The organization of the API key (or the child acted on): profile, entitlements, settings.",
  },
  {
    name: "Partner delegation",
    description:
      "Organizations a partner manages. Requests act on a child with X-Platform-Acting-On, within the scopes the child granted.",
  },
  { name: "Users", description: "Members of the organization: invitations, roles, deactivation." },
  {
    name: "Smart Schedules",
    description: "Booking pages: their routing form, and the bookable slots of the hosts the form values route to.",
  },
  { name: "Scheduled meetings", description: "Meetings booked from slot tokens: book, read, reschedule, cancel." },
  {
    name: "Transcripts",
    description: "What the recording bot captured of a meeting: transcript, chunks, chat, and the bot's status.",
  },
  { name: "Deals", description: "Opportunities with their stage, amount, custom fields and linked meetings." },
  { name: "Q&As", description: "Questions and answers captured on deals, and their state transitions." },
  { name: "8P insights", description: "The eight-P qualification records of a deal and the items appended to them." },
  { name: "Accounts", description: "Companies from the CRM, their contacts, deals, activity and related bundle." },
  { name: "Contacts", description: "People from the CRM and their activity timelines." },
  { name: "Buyer signals", description: "Engagement with sent emails: opens, clicks, replies, and their trends." },
  { name: "Email blasts", description: "Bulk email campaigns, their recipients and engagement." },
  {
    name: "Webhook subscriptions",
    description: "Where the platform POSTs signed events, with delivery attempts, secret rotation and test events.",
  },
  {
    name: "Events",
    description:
      "The org's events of the last 30 days, as its webhook deliveries carry them: paged, one by id, or streamed live as Server-Sent Events.",
  },
  {
    name: "API keys",
    description:
      "The key that makes the request: its organization, scopes, expiry and partner flag (the developer console's overview).",
  },
  {
    name: "Request logs",
    description:
      "The org's own API requests of the last 7 days (method, route, status, problem, duration, key id): look a requestId up, or list by filters.",
  },
  { name: "Webhook events", description: "What the platform POSTs to a subscription's endpoint, by event type." },
];
