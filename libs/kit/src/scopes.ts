/** Every scope the API knows, in the spec's order. */
export const ALL_SCOPES = [
  "smart-scheduling:read",
  "smart-scheduling:write",
  "deals:read",
  "deals:write",
  "qna:read",
  "qna:write",
  "insights:read",
  "insights:write",
  "users:read",
  "users:write",
  "organizations:read",
  "organizations:write",
  "accounts:read",
  "contacts:read",
  "transcripts:read",
  "buyer-signals:read",
  "email-blasts:read",
  "webhooks:read",
  "webhooks:write",
  // Not in the spec: the org's own request log (GET /request-logs), an addition beside it.
  "logs:read",
  "partner:act-as-child",
] as const;

export type Scope = (typeof ALL_SCOPES)[number];

/** May only be issued to tokens of partner-admin organizations. */
export const PARTNER_SCOPE: Scope = "partner:act-as-child";

export function isScope(s: string): s is Scope {
  return (ALL_SCOPES as readonly string[]).includes(s);
}

export const READ_SCOPES: Scope[] = ALL_SCOPES.filter((s) => s.endsWith(":read"));
