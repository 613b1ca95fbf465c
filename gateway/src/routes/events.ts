import type { Event as LoggedEvent } from "@platform/contracts/webhooks";
import { problem } from "@platform/kit/problems";
import { parseInstant } from "../mapping/time.js";
import { defineRoute, type RouteDeps, type RouteSpec } from "../route.js";
import type { JsonSchema } from "../schemas/common.js";
import { eventStreamSchema, listEventsQuery, streamEventsQuery } from "../schemas/events.js";
import { pageSchema } from "../schemas/pagination.js";
import type { ServiceClients } from "../services.js";
import { requiredFrom } from "./shared.js";

const required = requiredFrom("webhooks");

const TAG = "Events";
const LAST_EVENT_ID_HEADER = "last-event-id";
const DEFAULT_LIMIT = 25;
const MAX_LIMIT = 100;

interface ListQuery {
  cursor?: string;
  limit?: number;
  type?: string[];
  createdAfter?: string;
  createdBefore?: string;
}

function instant(raw: string | undefined, field: string) {
  if (raw === undefined) return undefined;
  const parsed = parseInstant(raw, { allowDate: true });
  if (!parsed) {
    throw problem("invalid-filter", `${field} must be an ISO 8601 date-time with a zone, or a date.`, { field });
  }
  return parsed;
}

// The stored payload is already the v2 envelope as JSON text: passed through as it is, so the
// log shows byte for byte what deliveries POST, with no parse and re-serialisation.
const eventJson = (e: LoggedEvent) => e.payloadJson;

/**
 * The organization's event log (webhooks service): a page of it, one event, and the live
 * stream. Scope webhooks:read; read tier (the stream counts once per connection).
 */
export function routes(clients: ServiceClients, deps: RouteDeps): RouteSpec[] {
  const client = clients.webhooks.events;
  const filters = ["type", "createdAfter", "createdBefore"] as const;

  const stream: RouteSpec = defineRoute({
    method: "GET",
    url: "/events/stream",
    operationId: "streamEvents",
    summary: "The organization's events live, as Server-Sent Events (resume with Last-Event-ID)",
    tag: TAG,
    scope: "webhooks:read",
    tier: "read",
    filters: ["type"],
    schema: { querystring: streamEventsQuery, response: { 200: eventStreamSchema } },
    responseType: "text/event-stream",
    problems: ["invalid-filter", "invalid-cursor"],
    async handler(call, request, reply) {
      const { type } = request.query as { type?: string[] };
      const types = type ?? [];
      const lastEventId = request.headers[LAST_EVENT_ID_HEADER];
      const afterEventId = typeof lastEventId === "string" ? lastEventId.trim() : "";
      const { batch } = deps.streams.options;
      const slot = await deps.streams.acquire(call.token.tokenId, reply);
      let first: Awaited<ReturnType<typeof client.pollEvents>>;
      try {
        // Before the headers go out, so a bad Last-Event-ID or filter is an ordinary problem response.
        first = await client.pollEvents({ afterEventId, types, limit: batch }, call.callOptions());
      } catch (err) {
        await slot.release();
        throw err;
      }
      await deps.streams.serve(request, reply, {
        slot,
        first,
        source: {
          poll: (position) => client.pollEvents({ afterPosition: position, types, limit: batch }, call.callOptions()),
          recheck: () => deps.recheck(stream, request),
        },
      });
      return reply;
    },
  });

  return [
    defineRoute({
      method: "GET",
      url: "/events",
      operationId: "listEvents",
      summary: "The organization's events of the last 30 days, newest first",
      tag: TAG,
      scope: "webhooks:read",
      tier: "read",
      filters,
      schema: { querystring: listEventsQuery, response: { 200: pageSchema("Event") } },
      problems: ["invalid-cursor", "invalid-filter"],
      async handler(call, request, reply) {
        const query = request.query as ListQuery;
        const createdAfter = instant(query.createdAfter, "createdAfter");
        const createdBefore = instant(query.createdBefore, "createdBefore");
        const res = await client.listEvents(
          {
            cursor: query.cursor ?? "",
            limit: Math.min(MAX_LIMIT, Math.max(1, query.limit ?? DEFAULT_LIMIT)),
            types: query.type ?? [],
            ...(createdAfter ? { createdAfter } : {}),
            ...(createdBefore ? { createdBefore } : {}),
          },
          call.callOptions(),
        );
        const next = res.nextCursor ? JSON.stringify(res.nextCursor) : "null";
        return reply
          .type("application/json; charset=utf-8")
          .send(`{"items":[${res.events.map(eventJson).join(",")}],"nextCursor":${next}}`);
      },
    }),
    stream,
    defineRoute({
      method: "GET",
      url: "/events/:eventId",
      operationId: "getEvent",
      summary: "One event of the organization's log",
      tag: TAG,
      scope: "webhooks:read",
      tier: "read",
      ids: { eventId: "evt_" },
      schema: { response: { 200: { $ref: "Event#" } } },
      problems: ["event-not-found"],
      async handler(call, request, reply) {
        const { eventId } = request.params as { eventId: string };
        const res = await client.getEvent({ eventId }, call.callOptions());
        return reply.type("application/json; charset=utf-8").send(eventJson(required(res.event, "event")));
      },
    }),
  ];
}

/** The Event component the routes above reference. */
/**
 * None of its own: the Event schema is the webhooks context's v2 delivery body, registered
 * with the webhooks module (routes/webhooks.ts).
 */
export const schemas: readonly JsonSchema[] = [];
