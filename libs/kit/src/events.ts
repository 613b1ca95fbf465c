/** Topic names, one per publishing context. */
export const TOPICS = {
  identity: "platform.identity.v1",
  gateway: "platform.gateway.v1",
  scheduling: "platform.scheduling.v1",
  revenue: "platform.revenue.v1",
  /** Account and contact changes from crm-data's ingest (the CRM sync); revenue projects them. */
  crm: "platform.crm.v1",
  /** Email events (sends, opens, clicks, replies, bounces) from the email-sending system; analytics ingests them. */
  email: "platform.email.v1",
  /** Webhooks' own events (a subscription the platform disabled); delivered to the org's other subscriptions. */
  webhooks: "platform.webhooks.v1",
  /** The gateway's summaries of the requests it answered, in batches; request-logs stores them. */
  requestLogs: "platform.requestlogs.v1",
} as const;

export type Topic = (typeof TOPICS)[keyof typeof TOPICS];

/** Event types (past tense), as carried in the `ce_type` header. */
export const EVENT_TYPES = {
  tokenCreated: "platform.identity.v1.TokenCreated",
  tokenRevoked: "platform.identity.v1.TokenRevoked",
  partnerGrantChanged: "platform.identity.v1.PartnerGrantChanged",
  organizationUpdated: "platform.identity.v1.OrganizationUpdated",
  userInvited: "platform.identity.v1.UserInvited",
  userUpdated: "platform.identity.v1.UserUpdated",
  delegatedRequestServed: "platform.gateway.v1.DelegatedRequestServed",
  // The scheduling events carry their webhook names, as the spec gives them.
  meetingBooked: "scheduling.smartscheduler.booked",
  meetingRescheduled: "scheduling.smartscheduler.rescheduled",
  meetingCanceled: "scheduling.smartscheduler.canceled",
  accountChanged: "platform.crm.v1.AccountChanged",
  contactChanged: "platform.crm.v1.ContactChanged",
  // Revenue's events carry the names webhook subscribers see too.
  dealCreated: "revenue.deal.created",
  dealUpdated: "revenue.deal.updated",
  qnaCreated: "revenue.qna.created",
  qnaUpdated: "revenue.qna.updated",
  insightCreated: "revenue.insight.created",
  insightItemAppended: "revenue.insight.item-appended",
  /** One email event as the email-sending system reports it (payload platform.events.email.v1.EmailEventRecorded). */
  emailEventRecorded: "platform.email.v1.EmailEventRecorded",
  /** Webhooks disabled a subscription (failing, endpoint-gone); named as subscribers see it. */
  webhookSubscriptionDisabled: "webhooks.subscription.disabled",
  /** A batch of request summaries (payload platform.events.requestlogs.v1.RequestsLogged). */
  requestsLogged: "platform.requestlogs.v1.RequestsLogged",
} as const;

/** A domain event as written to the outbox and read back by consumers. */
export interface EventEnvelope {
  /** Unique event id; consumers de-duplicate on it. */
  id: string;
  type: string;
  /** The producing service, e.g. "identity". */
  source: string;
  /** The resource the event is about, e.g. a token id. */
  subject?: string;
  /** ISO 8601 UTC. */
  time: string;
  /** W3C trace context of the request that caused the event. */
  traceparent?: string;
  /** The payload: the proto message of `type` in its canonical JSON form (`toJson`). */
  data: unknown;
}
