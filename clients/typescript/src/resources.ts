import type { OperationId, OperationMethod } from "./types.js";

/**
 * The resource-grouped surface: `client.<resource>.<method>` → operationId. Every method's
 * arguments and result come from the operation's generated types. An operation missing
 * here is still callable with `client.call(operationId, …)` and `client.request(method, path, …)`.
 */
export const RESOURCES = {
  organizations: {
    me: "getMyOrganization",
    entitlements: "getMyEntitlements",
    get: "getOrganization",
    update: "updateOrganization",
  },
  users: { list: "listUsers", get: "getUser", invite: "inviteUser", update: "updateUser" },
  partner: { listManagedOrganizations: "listManagedOrganizations" },
  apiKeys: { current: "getCurrentApiKey" },
  smartSchedules: { list: "listSmartSchedules", get: "getSmartSchedule", availability: "getAvailability" },
  meetings: {
    book: "bookMeeting",
    get: "getMeeting",
    reschedule: "rescheduleMeeting",
    cancel: "cancelMeeting",
    transcript: "getTranscript",
    transcriptChunks: "listTranscriptChunks",
    chat: "listChatMessages",
    bot: "getRecordingBot",
  },
  accounts: {
    list: "listAccounts",
    get: "getAccount",
    related: "getAccountRelated",
    activity: "listAccountActivity",
    contacts: "listAccountContacts",
    deals: "listAccountDeals",
  },
  contacts: { list: "listContacts", get: "getContact", activity: "listContactActivity" },
  deals: {
    list: "listDeals",
    get: "getDeal",
    getBySource: "getDealBySource",
    create: "createDeal",
    update: "updateDeal",
    meetings: "listDealMeetings",
    qnas: "getQnaBacklog",
    qnasForMeeting: "getQnaBacklogForMeeting",
    createQna: "createQna",
    insights: "listDealInsights",
    insight: "getDealInsight",
    createInsight: "createDealInsight",
    appendInsightItem: "appendInsightItem",
  },
  qnas: { get: "getQna", answer: "answerQna", transition: "transitionQna" },
  insights: { get: "getInsight" },
  buyerSignals: {
    summary: "getBuyerSignalsSummary",
    activity: "getBuyerSignalsActivity",
    sentEmails: "listSentEmails",
    sentEmail: "getSentEmail",
    sentEmailSignals: "listSentEmailSignals",
  },
  emailBlasts: {
    list: "listEmailBlasts",
    get: "getEmailBlast",
    summary: "getEmailBlastSummary",
    top: "listTopEmailBlasts",
    activity: "getEmailBlastActivity",
    recipients: "listEmailBlastRecipients",
  },
  webhookSubscriptions: {
    list: "listWebhookSubscriptions",
    get: "getWebhookSubscription",
    create: "createWebhookSubscription",
    update: "updateWebhookSubscription",
    delete: "deleteWebhookSubscription",
    rotateSecret: "rotateWebhookSecret",
    test: "testWebhookSubscription",
    deliveries: "listWebhookDeliveries",
    /** Deprecated: use resend. */
    redeliver: "redeliverWebhook",
    resend: "resendWebhookDelivery",
    recover: "recoverWebhookDeliveries",
    recovery: "getWebhookRecovery",
  },
  events: {
    list: "listEvents",
    get: "getEvent",
  },
  requestLogs: {
    list: "listRequestLogs",
    get: "getRequestLog",
  },
} as const satisfies Record<string, Record<string, OperationId>>;

/**
 * Operations that answer a stream, not one JSON document: `GET /events/stream` is
 * Server-Sent Events, read with an EventSource (or `npx platform listen`), so it gets no
 * request/response method.
 */
export const STREAMING_OPERATIONS: readonly OperationId[] = ["streamEvents"];

type Table = typeof RESOURCES;

/** The typed methods of every resource. */
export type Resources = {
  [R in keyof Table]: { [M in keyof Table[R]]: Table[R][M] extends OperationId ? OperationMethod<Table[R][M]> : never };
};
