/**
 * The spec's error table, one place. A service throws `problem(name, …)`; it crosses
 * Connect as an error detail and the gateway renders it as RFC 9457 problem+json.
 */
export const PROBLEM_CATALOG = {
  "missing-trust-header": { status: 401, title: "Missing or invalid credentials" },
  "unknown-subscription": { status: 401, title: "Unknown or revoked token" },
  "subscription-expired": { status: 401, title: "Token expired" },
  "token-not-org-scoped": { status: 401, title: "Token not scoped to an organization" },
  "insufficient-scope": { status: 403, title: "Insufficient scope" },
  "write-scope-required": { status: 403, title: "Write scope required" },
  "seat-limit-exceeded": { status: 403, title: "Seat limit exceeded" },
  "delegation-scope-required": { status: 403, title: "Delegation scope required" },
  "cross-org-delegation-forbidden": { status: 403, title: "Cross-organization delegation forbidden" },
  "delegation-scope-insufficient": { status: 403, title: "Delegation scope insufficient" },
  "invalid-acting-on-org": { status: 400, title: "Invalid acting-on organization" },
  "invalid-resource-id": { status: 400, title: "Invalid resource id" },
  "invalid-cursor": { status: 400, title: "Invalid cursor" },
  "invalid-sort-field": { status: 400, title: "Invalid sort field" },
  "invalid-filter": { status: 400, title: "Invalid filter" },
  "invalid-field": { status: 400, title: "Invalid field" },
  "invalid-role": { status: 400, title: "Invalid role" },
  "invalid-email": { status: 400, title: "Invalid email" },
  "email-domain-not-verified": { status: 400, title: "Email domain not verified" },
  "invalid-schema-type": { status: 400, title: "Invalid 8P schema type" },
  "invalid-target-state": { status: 400, title: "Invalid target state" },
  "idempotency-key-required": { status: 400, title: "Idempotency-Key required" },
  "invalid-request": { status: 400, title: "Invalid request" },
  "malformed-json": { status: 400, title: "Malformed JSON body" },
  "webhook-recovery-window-exceeded": { status: 400, title: "Webhook recovery window exceeded" },
  "idempotency-key-conflict": { status: 422, title: "Idempotency key reused with a different body" },
  "not-found": { status: 404, title: "Not found" },
  "schedule-not-found": { status: 404, title: "Schedule not found" },
  "meeting-not-found": { status: 404, title: "Meeting not found" },
  "webhook-subscription-not-found": { status: 404, title: "Webhook subscription not found" },
  "event-not-found": { status: 404, title: "Event not found" },
  "webhook-delivery-not-found": { status: 404, title: "Webhook delivery not found" },
  "webhook-recovery-not-found": { status: 404, title: "Webhook recovery not found" },
  "transcript-not-available": { status: 404, title: "Transcript not available" },
  "bot-not-configured": { status: 404, title: "Recording bot not configured" },
  "account-not-found": { status: 404, title: "Account not found" },
  "contact-not-found": { status: 404, title: "Contact not found" },
  "deal-not-found": { status: 404, title: "Deal not found" },
  "insight-record-not-found": { status: 404, title: "Insight record not found" },
  "qna-item-not-found": { status: 404, title: "Q&A item not found" },
  "user-not-found": { status: 404, title: "User not found" },
  "organization-not-found": { status: 404, title: "Organization not found" },
  "email-blast-not-found": { status: 404, title: "Email blast not found" },
  "sent-email-not-found": { status: 404, title: "Sent email not found" },
  "request-log-not-found": { status: 404, title: "Request log not found" },
  "method-not-allowed": { status: 405, title: "Method not allowed" },
  "request-timeout": { status: 408, title: "Request timeout" },
  "slot-conflict": { status: 409, title: "Slot no longer available" },
  "meeting-not-reschedulable": { status: 409, title: "Meeting cannot be rescheduled" },
  "deal-closed": { status: 409, title: "Deal is closed" },
  "qna-transition-invalid": { status: 409, title: "Q&A transition not allowed" },
  "email-already-in-use": { status: 409, title: "Email already in use" },
  "webhook-recovery-in-progress": { status: 409, title: "Webhook recovery in progress" },
  "slot-token-expired": { status: 410, title: "Slot token expired" },
  "meeting-completed": { status: 410, title: "Meeting already completed" },
  "transcript-expired": { status: 410, title: "Transcript expired" },
  "precondition-failed": { status: 412, title: "Precondition failed" },
  "payload-too-large": { status: 413, title: "Payload too large" },
  "uri-too-long": { status: 414, title: "URI too long" },
  "unsupported-media-type": { status: 415, title: "Unsupported media type" },
  "slot-token-invalid": { status: 422, title: "Slot token invalid" },
  "availability-request-invalid": { status: 422, title: "Availability request invalid" },
  "form-validation": { status: 422, title: "Form validation failed" },
  "booking-validation-failed": { status: 422, title: "Booking validation failed" },
  "schedule-unavailable": { status: 422, title: "Schedule unavailable" },
  "schedule-mismatch": { status: 422, title: "Schedule mismatch" },
  "webhook-endpoint-invalid": { status: 422, title: "Webhook endpoint invalid" },
  "webhook-events-invalid": { status: 422, title: "Webhook events invalid" },
  "webhook-limit-reached": { status: 422, title: "Webhook subscription limit reached" },
  "transcript-window-invalid": { status: 422, title: "Transcript window invalid" },
  "schema-mismatch": { status: 422, title: "Schema mismatch" },
  "source-ref-conflict": { status: 422, title: "Source reference conflict" },
  "insight-field-invalid": { status: 422, title: "Insight field invalid" },
  "qna-shape-invalid": { status: 422, title: "Q&A shape invalid" },
  "answer-source-invalid": { status: 422, title: "Answer source invalid" },
  "schema-not-found": { status: 422, title: "Schema not found" },
  "last-administrator": { status: 422, title: "Last administrator" },
  "administrator-transfer-required": { status: 422, title: "Administrator transfer required" },
  "rate-limit-exceeded": { status: 429, title: "Rate limit exceeded" },
  "request-header-fields-too-large": { status: 431, title: "Request header fields too large" },
  internal: { status: 500, title: "Internal error" },
  "not-implemented": { status: 501, title: "Not implemented" },
  "service-unavailable": { status: 503, title: "Service unavailable" },
  "upstream-timeout": { status: 504, title: "Upstream timeout" },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemName = keyof typeof PROBLEM_CATALOG;
export type ProblemExtensions = Record<string, unknown>;

/** A typed API error. `extensions` become top-level members of the problem body. */
export class ProblemError extends Error {
  readonly problemName: ProblemName;
  readonly status: number;
  readonly detail: string;
  readonly extensions: ProblemExtensions;

  constructor(name: ProblemName, detail?: string, extensions: ProblemExtensions = {}) {
    const entry = PROBLEM_CATALOG[name];
    super(detail ?? entry.title);
    this.name = "ProblemError";
    this.problemName = name;
    this.status = entry.status;
    this.detail = detail ?? entry.title;
    this.extensions = extensions;
  }
}

export function problem(name: ProblemName, detail?: string, extensions?: ProblemExtensions): ProblemError {
  return new ProblemError(name, detail, extensions);
}

export function isProblemName(name: string): name is ProblemName {
  return Object.hasOwn(PROBLEM_CATALOG, name);
}

/** The RFC 9457 body. Extension members never override the standard members. */
export function problemBody(p: ProblemError, docsUrl: string, requestId?: string): Record<string, unknown> {
  return {
    ...p.extensions,
    type: `${docsUrl.replace(/\/$/, "")}/platform-api/errors/${p.problemName}`,
    title: PROBLEM_CATALOG[p.problemName].title,
    status: p.status,
    detail: p.detail,
    ...(requestId ? { requestId } : {}),
  };
}
