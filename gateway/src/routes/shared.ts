import { problem } from "@platform/kit/problems";
import type { FastifyReply } from "fastify";
import type { ApiCall, JsonSchema, RouteSpec } from "../route.js";
import { type PageSpec, pageSchema } from "../schemas/pagination.js";

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
