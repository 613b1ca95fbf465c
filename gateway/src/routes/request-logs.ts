import { problem } from "@platform/kit/problems";
import { requestLogJson } from "../mapping/request-logs.js";
import { parseInstant } from "../mapping/time.js";
import { isRequestIdShaped } from "../request-id.js";
import { defineRoute, type RouteSpec } from "../route.js";
import type { JsonSchema } from "../schemas/common.js";
import { requestLogSchemas, requestLogsPage } from "../schemas/request-logs.js";
import type { ServiceClients } from "../services.js";
import { listOf, readerFrom, textFilters } from "./shared.js";

const read = readerFrom("request-logs");

interface RequestLogQuery {
  status?: number;
  statusClass?: string;
  method?: string;
  route?: string;
  problemType?: string;
  keyId?: string;
  from?: string;
  to?: string;
}

function instant(raw: string | undefined, field: string) {
  if (raw === undefined) return undefined;
  const parsed = parseInstant(raw, { allowDate: true });
  if (!parsed) {
    throw problem("invalid-filter", `${field} must be an ISO 8601 date-time with a zone, or a date.`, { field });
  }
  return parsed;
}

/**
 * The org's own request log (request-logs service), not in the spec: what the key's org asked
 * of the API in the last 7 days. Scope logs:read; read tier. A partner's requests on behalf of
 * a child are in the partner's log, so these routes are not called acting on a child.
 */
export function routes(clients: ServiceClients): RouteSpec[] {
  const { requestLogs } = clients.requestLogs;
  const common = { tag: "Request logs", scope: "logs:read", tier: "read", actingOn: "forbidden" } as const;
  return [
    defineRoute({
      ...common,
      url: "/request-logs",
      operationId: "listRequestLogs",
      summary: "The organization's API requests of the last 7 days, newest first",
      problems: ["invalid-filter", "invalid-cursor"],
      ...listOf(requestLogsPage, "RequestLog", {
        list: (page, q: RequestLogQuery, options) => {
          const from = instant(q.from, "from");
          const to = instant(q.to, "to");
          return requestLogs.listRequestLogs(
            {
              ...page,
              status: q.status ?? 0,
              ...textFilters(q, "statusClass", "method", "route", "problemType", "keyId"),
              ...(from ? { from } : {}),
              ...(to ? { to } : {}),
            },
            options,
          );
        },
        items: (res) => res.requestLogs,
        toJson: requestLogJson,
      }),
    }),
    defineRoute({
      ...common,
      method: "GET",
      url: "/request-logs/:requestId",
      operationId: "getRequestLog",
      summary: "One API request of the organization, by its requestId",
      problems: ["request-log-not-found"],
      schema: {
        params: {
          type: "object",
          properties: {
            requestId: {
              type: "string",
              description: "The request's X-Request-Id (req_… unless the client sent its own)",
            },
          },
          required: ["requestId"],
        },
        response: { 200: { $ref: "RequestLog#" } },
      },
      async handler(call, request) {
        const { requestId } = request.params as { requestId: string };
        // No request was ever given an id of another shape (a NUL byte, a 2 KB string): such
        // an id is unknown, and never reaches the store.
        if (!isRequestIdShaped(requestId)) {
          throw problem("request-log-not-found", `No request '${requestId.slice(0, 128)}' in the last 7 days.`);
        }
        return read(requestLogs.getRequestLog, "requestLog", requestLogJson, "request log")({ requestId }, call);
      },
    }),
  ];
}

/** Shared JSON schemas ($id'd) the routes above reference. */
export const schemas: readonly JsonSchema[] = requestLogSchemas;
