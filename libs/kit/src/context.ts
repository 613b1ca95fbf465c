import { createHmac, timingSafeEqual } from "node:crypto";
import type { Clock } from "./clock.js";
import { problem } from "./problems.js";

/** Header carrying the gateway-signed request context to a service. */
export const CONTEXT_HEADER = "x-platform-context";

/** Set by a service on a response that replays a stored one; the gateway answers X-Idempotent-Replay: true. */
export const IDEMPOTENT_REPLAY_HEADER = "x-idempotent-replay";

/**
 * Who is calling, as established by the gateway. `orgId` is the org the request acts on
 * (the child when delegating); `parentOrgId` is set only for delegated calls.
 */
export interface RequestContext {
  /** "api" for integrator requests, "gateway" for the gateway's own look-ups. */
  principal: "api" | "gateway";
  requestId: string;
  orgId?: string;
  parentOrgId?: string;
  tokenId?: string;
  scopes?: string[];
  idempotencyKey?: string;
  /** With idempotencyKey: hashes of the request's parts, so a conflict can say what differed. */
  requestFingerprint?: RequestFingerprint;
}

/** Hashes of the parts of an HTTP request, as the gateway received it. */
export interface RequestFingerprint {
  /** Method, endpoint and path parameters. */
  target: string;
  query: string;
  body: string;
}

/** How long a signed context stays valid; it is minted per call, so this only bounds replay. */
const MAX_AGE_MS = 60_000;

function mac(secret: string, payload: string): Buffer {
  return createHmac("sha256", secret).update(payload).digest();
}

export function signContext(ctx: RequestContext, secret: string, clock: Clock): string {
  const payload = Buffer.from(JSON.stringify({ ...ctx, iat: clock.now().getTime() })).toString("base64url");
  return `${payload}.${mac(secret, payload).toString("base64url")}`;
}

/**
 * Whether a context header (not verified: the caller's own) carries an idempotency key: the
 * service then runs the call once whatever number of times it is sent, and a call whose
 * connection was lost before any answer may be sent again (unary-transport.ts).
 */
export function contextHasIdempotencyKey(header: string | null | undefined): boolean {
  const dot = header?.indexOf(".") ?? -1;
  if (!header || dot <= 0) return false;
  try {
    const ctx = JSON.parse(Buffer.from(header.slice(0, dot), "base64url").toString("utf8")) as RequestContext;
    return typeof ctx.idempotencyKey === "string" && ctx.idempotencyKey.length > 0;
  } catch {
    return false;
  }
}

/**
 * Verifies a context header. Missing, malformed or not signed with `secret`: 401
 * missing-trust-header (the call did not come through the gateway; the spec's condition for
 * it). Genuine but older than its lifetime: 504 upstream-timeout, since it is the call's
 * lateness, not its credentials, that is wrong (and the gateway turns a service's
 * missing-trust-header into a 500). Issued in the future: 503 service-unavailable.
 */
export function verifyContext(header: string | null | undefined, secret: string, clock: Clock): RequestContext {
  const fail = () => problem("missing-trust-header", "The request did not come through the gateway.");
  if (!header) throw fail();
  const dot = header.indexOf(".");
  if (dot <= 0) throw fail();
  const payload = header.slice(0, dot);
  const given = Buffer.from(header.slice(dot + 1), "base64url");
  const expected = mac(secret, payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw fail();
  let parsed: RequestContext & { iat?: number };
  try {
    parsed = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    throw fail();
  }
  const age = clock.now().getTime() - (parsed.iat ?? 0);
  // A genuine context that aged out means the call reached the service (or the service
  // reached it: a paused process) after its caller's deadline, which is always shorter than
  // the lifetime: a 504 the gateway passes on, never the 500 a forged or missing context is
  // at the gateway.
  if (!(age < MAX_AGE_MS)) {
    throw problem("upstream-timeout", "The request reached the service after its deadline; retry with backoff.");
  }
  // Issued in the future: the gateway's and the service's clocks disagree by over a minute.
  if (!(age > -MAX_AGE_MS)) {
    throw problem("service-unavailable", "The platform's clocks disagree; retry later.");
  }
  const { iat: _iat, ...ctx } = parsed;
  return ctx;
}
