import type { CallOptions } from "@connectrpc/connect";
import { problem } from "@platform/kit/problems";
import type { FastifyReply } from "fastify";
import type { ApiCall, RouteSpec } from "../route.js";
import type { JsonSchema } from "../schemas/common.js";
import { type PageQuery, type PageRequest, type PageSpec, pageRequest, pageSchema } from "../schemas/pagination.js";

// Helpers every route module uses (the route modules themselves are the other files here).

/**
 * The reading of a field every successful answer of the named service carries (proto3 makes
 * message fields optional): its absence is a broken service, an internal error, not a 404.
 */
export function requiredFrom(service: string) {
  return <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${service} returned no ${what}`);
    return value;
  };
}

/**
 * The usual `read` of getById, by the named service's get RPC: the ids go to `rpc`, and the
 * resource its answer carries in `field` (every successful answer does: see requiredFrom)
 * becomes JSON through `toJson`. `what` names the field in the error of a broken answer.
 */
export function readerFrom(service: string) {
  const required = requiredFrom(service);
  return <I, R, F extends keyof R & string>(
    rpc: (input: I, options: CallOptions) => Promise<R>,
    field: F,
    toJson: (resource: NonNullable<R[F]>) => unknown,
    what: string = field,
  ) =>
    async (input: I, call: ApiCall): Promise<unknown> => {
      const res = await rpc(input, call.callOptions());
      return toJson(required(res[field], what) as NonNullable<R[F]>);
    };
}

/** An optional JSON body: absent is empty; present, it must be an object (its schema checked the properties). */
export function optionalBody<T extends object>(body: unknown): T {
  if (body === undefined || body === null) return {} as T;
  if (typeof body !== "object" || Array.isArray(body))
    throw problem("invalid-field", "The request body must be an object.");
  return body as T;
}

/**
 * The pieces of a GET (read tier) of one resource named by the id in its path: the id's prefix
 * check, the response (the $id'd schema of that name) and a handler that passes the id to `read`.
 * The route keeps its url, operationId, summary, scope and problems.
 */
export function getById<K extends string>(
  param: K,
  prefix: string | readonly string[],
  response: string,
  read: (ids: Record<K, string>, call: ApiCall, reply: FastifyReply) => Promise<unknown>,
): Pick<RouteSpec, "method" | "tier" | "ids" | "schema" | "handler"> {
  return {
    method: "GET",
    tier: "read",
    ids: { [param]: prefix },
    schema: { response: { 200: { $ref: `${response}#` } } },
    async handler(call, request, reply) {
      const id = (request.params as Record<K, string>)[param];
      return read({ [param]: id } as Record<K, string>, call, reply);
    },
  };
}

/** The pieces of a GET (read tier) of a list: its query, page spec, and pages of the $id'd item schema of that name. */
export function getList(
  list: { query: JsonSchema; page: PageSpec },
  item: string,
): Pick<RouteSpec, "method" | "tier" | "page" | "schema"> {
  return {
    method: "GET",
    tier: "read",
    page: list.page,
    schema: { querystring: list.query, response: { 200: pageSchema(item) } },
  };
}

/** A page of a list RPC's answer: its items as JSON, and nextCursor, empty on the last page, as null. */
export function pageJson<T>(items: readonly T[], toJson: (item: T) => unknown, nextCursor: string) {
  return { items: items.map(toJson), nextCursor: nextCursor || null };
}

/**
 * Text filters as the list RPCs take them: an absent one is "", proto3's "no filter".
 * The names are the query parameters' and the request fields' (they are the same).
 */
export function textFilters<K extends string>(query: Partial<Record<K, string>>, ...names: K[]): Record<K, string> {
  const filters = {} as Record<K, string>;
  for (const name of names) filters[name] = query[name] ?? "";
  return filters;
}

/** A list route's pieces beyond its page: the ids of its path (the parent), the RPC, and how an answer becomes a page. */
export interface ListOf<P extends string, Q, R, T> {
  /** Path parameters that are ids, with their accepted prefixes; they go into the request as they are. */
  ids?: Record<P, string>;
  /** Asks the service for one page: `page` holds the path's ids and the page part of the query. */
  list(page: PageRequest & Record<P, string>, query: PageQuery & Q, options: CallOptions): Promise<R>;
  /** The answer's items (the field name differs per RPC). */
  items(res: R): readonly T[];
  toJson(item: T): unknown;
}

/**
 * The pieces of a GET (read tier) of a list, handler included: getList's query, page spec and
 * response, and a handler that hands the path's ids, the page request and the query to `list`
 * and answers with a page of its items as JSON. The route keeps its url, operationId, summary,
 * scope and problems.
 */
export function listOf<Q, R extends { nextCursor: string }, T, P extends string = never>(
  list: { query: JsonSchema; page: PageSpec },
  item: string,
  of: ListOf<P, Q, R, T>,
): Pick<RouteSpec, "method" | "tier" | "ids" | "page" | "schema" | "handler"> {
  return {
    ...(of.ids ? { ids: of.ids } : {}),
    ...getList(list, item),
    async handler(call, request) {
      const query = request.query as PageQuery & Q;
      const page = { ...(request.params as Record<P, string>), ...pageRequest(list.page, query) };
      const res = await of.list(page, query, call.callOptions());
      return pageJson(of.items(res), of.toJson, res.nextCursor);
    },
  };
}
