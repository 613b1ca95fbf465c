import type { CallOptions } from "@connectrpc/connect";
import type { Clock } from "@platform/kit/clock";
import type { RequestContext } from "@platform/kit/context";
import type { ProblemName } from "@platform/kit/problems";
import type { Scope } from "@platform/kit/scopes";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Token } from "./auth.js";
import type { EventStreams } from "./event-stream.js";
import type { PageBinding } from "./http/cursor-binding.js";
import type { Tier } from "./rate-limit/limiter.js";
import type { JsonSchema } from "./schemas/common.js";
import type { PageSpec } from "./schemas/pagination.js";
import type { ServiceClients } from "./services.js";

/** Every public path starts with this. */
export const API_PREFIX = "/api/v1alpha1";

/** What the gateway established about a request before its handler runs. */
export interface ApiCall {
  token: Token;
  /** The child org when the request carries X-Platform-Acting-On. */
  actingOn: string | undefined;
  /** The signed context services receive (orgId is the child when delegating). */
  context: RequestContext;
  /** The version in If-Match, on routes that require one. */
  expectedVersion: bigint | undefined;
  /** List routes: the sort, endpoint and org the page's cursors are bound to. */
  page: PageBinding | undefined;
  /**
   * Options for a Connect call on behalf of this request. A response the service replays
   * from its idempotency record marks the reply with X-Idempotent-Replay: true.
   */
  callOptions(): CallOptions;
}

export type RouteHandler = (call: ApiCall, request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/** One public endpoint: what it needs before its handler runs, and how it is documented. */
export interface RouteSpec {
  method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE";
  /** Path below API_PREFIX in fastify syntax, e.g. "/organizations/:orgId". */
  url: string;
  operationId: string;
  summary: string;
  /** OpenAPI tag (the spec's section). */
  tag: string;
  /** Scopes the token needs; several when the endpoint reads more than one area. */
  scope: Scope | readonly Scope[];
  tier: Tier;
  /**
   * The problem for a token that holds only the read counterpart of the required write
   * scope (the spec's write-scope-required on organization writes); insufficient-scope else.
   */
  readOnlyTokenProblem?: "write-scope-required";
  idempotencyKey?: "required";
  /** Optimistic concurrency: If-Match carries the ETag W/"<version>" the write expects. */
  ifMatch?: "required";
  /** The delegation list itself must not be called on behalf of a child. */
  actingOn?: "forbidden";
  /** List endpoints: the sort allowlist the guard checks sort and cursor against. */
  page?: PageSpec;
  /** Filters of a route that is not a list (lists declare theirs in `page`): a bad value is 400 invalid-filter. */
  filters?: readonly string[];
  /** Path parameters that are resource ids, with their accepted prefixes. */
  ids?: Record<string, string | readonly string[]>;
  schema?: {
    params?: JsonSchema;
    querystring?: JsonSchema;
    body?: JsonSchema;
    /** Success responses by status; error responses are documented for every route. */
    response?: Record<number, JsonSchema>;
  };
  /**
   * Resource fields a write body may not carry, with the reason its 400 invalid-field gives
   * (the body schema leaves them out, like any unknown field).
   */
  notWritable?: Record<string, string>;
  /** The problem a body that fails its schema becomes; invalid-field unless the spec says otherwise. */
  invalidBody?: ProblemName;
  /** Route-specific problems, for the documentation of the error responses. */
  problems?: ProblemName[];
  /** Media type of the success body, for the documentation; application/json unless set. */
  responseType?: string;
  /** The body may be absent (its schema admits that): the document says `requestBody.required: false`. */
  optionalBody?: true;
  /** Marks the operation deprecated in the document, with what replaces it (it keeps working). */
  deprecated?: string;
  /** Route-specific success response headers, name → description, for the documentation. */
  headers?: Record<string, string>;
  handler: RouteHandler;
}

/** What route modules need besides the Connect clients (each module takes what it uses). */
export interface RouteDeps {
  clock: Clock;
  /** The open event streams (the events routes). */
  streams: EventStreams;
  /** Runs the route's authentication, delegation and scope checks again (a stream outlives its first check). */
  recheck(spec: RouteSpec, request: FastifyRequest): Promise<void>;
}

/**
 * One module per context under routes/: its endpoints, and the $id'd JSON schemas they
 * reference (registered before any route, in the order of the module list in app.ts).
 */
export interface RouteModule {
  routes(clients: ServiceClients, deps: RouteDeps): RouteSpec[];
  schemas: readonly JsonSchema[];
}

export function defineRoute(spec: RouteSpec): RouteSpec {
  return spec;
}

export function requiredScopes(spec: RouteSpec): readonly Scope[] {
  return typeof spec.scope === "string" ? [spec.scope] : spec.scope;
}

declare module "fastify" {
  interface FastifyContextConfig {
    /** The spec of an API route, for the error handler and the OpenAPI document. */
    platformRoute?: RouteSpec;
  }
}
