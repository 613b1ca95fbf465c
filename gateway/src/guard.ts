import type { Socket } from "node:net";
import type { Clock } from "@platform/kit/clock";
import type { RequestContext } from "@platform/kit/context";
import type { CursorCodec } from "@platform/kit/cursor";
import { parseId } from "@platform/kit/ids";
import { parseSort } from "@platform/kit/pagination";
import { problem } from "@platform/kit/problems";
import { withCallTrace } from "@platform/kit/rpc-telemetry";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { ApiKeyAuthenticator, Token } from "./auth.js";
import { ACTING_ON_HEADER, type Delegation, type DelegationResolver } from "./delegation.js";
import type { KeylessConnections } from "./http/connection-limits.js";
import { openCursor, type PageBinding } from "./http/cursor-binding.js";
import { requestFingerprint } from "./http/idempotency-fingerprint.js";
import { bringsNonJsonBody } from "./http/json-body.js";
import type { RateLimiter, Tier } from "./rate-limit/limiter.js";
import { type ApiCall, type RouteSpec, requiredScopes } from "./route.js";
import { type ContextSigner, forwardReplay } from "./services.js";

const API_KEY_HEADER = "x-platform-api-key";
const IDEMPOTENCY_KEY_HEADER = "idempotency-key";
const IDEMPOTENCY_KEY_MAX = 255;
const IF_MATCH_HEADER = "if-match";
/** What a client sends back of the ETag W/"<version>"; the strong form is accepted too. */
const VERSION_ETAG = /^(?:W\/)?"(\d{1,18})"$/;

/** Response header of a write answered from the service's idempotency record. */
const IDEMPOTENT_REPLAY_RESPONSE_HEADER = "x-idempotent-replay";

declare module "fastify" {
  interface FastifyRequest {
    /** Set by the guard of an API route before its handler runs. */
    apiCall: ApiCall | null;
  }
}

export interface GuardDeps {
  authenticator: ApiKeyAuthenticator;
  delegation: DelegationResolver;
  limiter: RateLimiter;
  clock: Clock;
  sign: ContextSigner;
  cursors: CursorCodec;
  /** Deadline of the service calls of a route, by its tier (Connect sends it to the service). */
  timeouts: Record<Tier, number>;
  /** Connections without a valid key per client address (unset when the app has no server, in tests). */
  keyless?: KeylessConnections;
}

/** Seconds a refused keyless connection should wait before trying again. */
const KEYLESS_RETRY_AFTER_S = "1";

function checkScopes(spec: RouteSpec, token: Token, delegation: Delegation | undefined): void {
  const required = requiredScopes(spec);
  for (const scope of required) {
    if (token.scopes.includes(scope)) continue;
    const readOnly = spec.readOnlyTokenProblem && token.scopes.includes(scope.replace(/:write$/, ":read"));
    throw problem(
      readOnly ? spec.readOnlyTokenProblem! : "insufficient-scope",
      `This endpoint requires the ${scope} scope.`,
      { requiredScope: scope },
    );
  }
  if (!delegation) return;
  for (const scope of required) {
    if (delegation.effectiveScopes.includes(scope)) continue;
    throw problem(
      "delegation-scope-insufficient",
      `The organization in X-Platform-Acting-On has not granted ${scope} to this partner.`,
      { requiredScope: scope, grantedScopes: delegation.effectiveScopes },
    );
  }
}

function checkIds(spec: RouteSpec, params: unknown): void {
  if (!spec.ids) return;
  const values = params as Record<string, string>;
  for (const [name, prefix] of Object.entries(spec.ids)) parseId(prefix, values[name] ?? "", name);
}

/**
 * List endpoints: a sort outside the allowlist is 400 invalid-sort-field; a cursor that is
 * malformed, tampered with, or handed out under another sort, endpoint or org is 400
 * invalid-cursor. The handler passes on the service's own cursor (see cursor-binding.ts),
 * which the owning service decodes with the shared secret to continue the keyset.
 */
function checkPage(
  spec: RouteSpec,
  request: FastifyRequest,
  orgId: string,
  cursors: CursorCodec,
): PageBinding | undefined {
  if (!spec.page) return undefined;
  const query = (request.query ?? {}) as Record<string, unknown>;
  const { sort, cursor } = query;
  let sortKey = "";
  if (spec.page.defaultSort !== undefined) {
    sortKey = parseSort(
      typeof sort === "string" ? sort : undefined,
      [...spec.page.sortFields],
      spec.page.defaultSort,
    ).key;
    // As the schema's enum names it (trimmed, the default for an empty one): a sort the guard
    // accepted always passes the schema, and one it refused was already invalid-sort-field.
    if (typeof sort === "string") query.sort = sortKey;
  } else if (sort !== undefined) {
    throw problem("invalid-sort-field", "This list has no sort parameter.", {
      field: String(sort),
      allowedSortFields: [],
    });
  }
  const binding = {
    sort: sortKey,
    scope: { operationId: spec.operationId, params: request.params as Record<string, string>, orgId },
  };
  if (typeof cursor === "string" && cursor !== "") query.cursor = openCursor(cursors, cursor, sortKey, binding.scope);
  return binding;
}

function idempotencyKey(spec: RouteSpec, header: string | string[] | undefined): string | undefined {
  if (spec.idempotencyKey !== "required") return undefined;
  if (typeof header !== "string" || header === "") {
    throw problem("idempotency-key-required", "This endpoint requires an Idempotency-Key header.");
  }
  if (header.length > IDEMPOTENCY_KEY_MAX) {
    throw problem("invalid-field", `Idempotency-Key must be at most ${IDEMPOTENCY_KEY_MAX} characters.`, {
      field: "Idempotency-Key",
    });
  }
  return header;
}

function expectedVersion(spec: RouteSpec, header: string | string[] | undefined): bigint | undefined {
  if (spec.ifMatch !== "required") return undefined;
  if (header === undefined || header === "") {
    throw problem(
      "precondition-failed",
      'This endpoint requires an If-Match header with the ETag W/"<version>" of the resource.',
    );
  }
  const version = typeof header === "string" ? VERSION_ETAG.exec(header.trim())?.[1] : undefined;
  if (version === undefined) {
    throw problem(
      "precondition-failed",
      'If-Match must be the single ETag W/"<version>" of the resource, as its GET returned it.',
    );
  }
  return BigInt(version);
}

/** What admission established about a request: its token and, when delegating, the grant. */
export interface Admission {
  token: Token;
  delegation: Delegation | undefined;
}

declare module "fastify" {
  interface FastifyRequest {
    /** Set by the admission of an API route (onRequest), before its body is read. */
    admission: Admission | null;
  }
}

/**
 * Whether a request may send its body at all, decided on its headers alone (fastify's
 * onRequest, before the body is read): a body that is not JSON (415), the API key (401),
 * the delegation header (400/403), scopes (403), rate limits (429). A refused request is
 * answered at once and its connection closed without its body being read (body-receipt.ts).
 */
export function admitFor(spec: RouteSpec, deps: GuardDeps) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (bringsNonJsonBody(request)) {
      throw problem("unsupported-media-type", "Request bodies must be JSON (Content-Type: application/json).");
    }
    const socket = request.raw.socket as Socket | undefined;
    const apiKey = request.headers[API_KEY_HEADER];
    if (apiKey === undefined && deps.keyless?.isOverCap(socket)) {
      reply.header("retry-after", KEYLESS_RETRY_AFTER_S);
      throw problem(
        "rate-limit-exceeded",
        `This address holds ${deps.keyless.cap} connections without an API key; send the key, or close some of them.`,
        { limit: deps.keyless.cap },
      );
    }
    const trace = request.traceContext ?? undefined;
    const token = await deps.authenticator.authenticate(apiKey, request.id, trace);
    // A valid key: the request is the org's, in its request log, whatever is refused next.
    request.keyToken = token;
    deps.keyless?.keyed(socket);
    const delegation = await deps.delegation.resolve(request.headers[ACTING_ON_HEADER], token, {
      allowed: spec.actingOn !== "forbidden",
      requestId: request.id,
      trace,
    });
    checkScopes(spec, token, delegation);
    await deps.limiter.enforce(
      reply,
      spec.tier,
      { tokenId: token.tokenId, actingOn: delegation?.childOrgId },
      deps.clock.now().getTime(),
    );
    request.admission = { token, delegation };
  };
}

/**
 * The checks that follow admission and the body's parsing, in the spec's order, before the body
 * is validated and the handler runs: path ids (400), pagination (400), Idempotency-Key (400),
 * If-Match (412).
 */
export function guardFor(spec: RouteSpec, deps: GuardDeps) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (!request.admission) throw new Error(`admission did not run for ${spec.operationId}`);
    const { token, delegation } = request.admission;
    checkIds(spec, request.params);
    const page = checkPage(spec, request, delegation?.childOrgId ?? token.orgId, deps.cursors);
    const key = idempotencyKey(spec, request.headers[IDEMPOTENCY_KEY_HEADER]);
    const timeoutMs = deps.timeouts[spec.tier];
    const version = expectedVersion(spec, request.headers[IF_MATCH_HEADER]);
    const context: RequestContext = {
      principal: "api",
      requestId: request.id,
      orgId: delegation?.childOrgId ?? token.orgId,
      ...(delegation ? { parentOrgId: token.orgId } : {}),
      tokenId: token.tokenId,
      scopes: delegation?.effectiveScopes ?? token.scopes,
      ...(key !== undefined ? { idempotencyKey: key, requestFingerprint: requestFingerprint(spec, request) } : {}),
    };
    request.apiCall = {
      token,
      actingOn: delegation?.childOrgId,
      context,
      expectedVersion: version,
      page,
      // The request's trace goes with its calls, entered or not (http-server-span.ts).
      callOptions: () =>
        withCallTrace(
          {
            ...forwardReplay(deps.sign(context), () => reply.header(IDEMPOTENT_REPLAY_RESPONSE_HEADER, "true")),
            timeoutMs,
          },
          request.traceContext,
        ),
    };
  };
}

/**
 * The identity checks of `admitFor` again, for a request that outlives them (the event
 * stream): throws when the key was revoked or expired, the delegation withdrawn, or the
 * scope removed since. Counts nothing against the rate limits.
 */
export async function recheckAccess(spec: RouteSpec, deps: GuardDeps, request: FastifyRequest): Promise<void> {
  const trace = request.traceContext ?? undefined;
  const token = await deps.authenticator.authenticate(request.headers[API_KEY_HEADER], request.id, trace);
  const delegation = await deps.delegation.resolve(request.headers[ACTING_ON_HEADER], token, {
    allowed: spec.actingOn !== "forbidden",
    requestId: request.id,
    trace,
  });
  checkScopes(spec, token, delegation);
}
