import { STATUS_CLASSES } from "@platform/contracts/request-logs";
import { closedObject, type JsonSchema, nullable, str, timestamp } from "./common.js";
import { pageQuery } from "./pagination.js";

// Query and response schemas of the request log (GET /request-logs, GET /request-logs/{requestId}).

const METHODS = ["GET", "HEAD", "POST", "PATCH", "PUT", "DELETE"] as const;

/** The list's page query: no sort (newest first), and its filters, each a 400 invalid-filter when malformed. */
export const requestLogsPage = pageQuery([], undefined, {
  status: { type: "integer", minimum: 100, maximum: 599, description: "Only this status code, e.g. 404" },
  statusClass: { type: "string", enum: [...STATUS_CLASSES], description: "Only this class of status" },
  method: { type: "string", enum: [...METHODS], description: "Only this HTTP method" },
  route: str("Only this route template, as the API documents it, e.g. /deals/{dealId}"),
  problemType: str("Only responses with this problem: its name (deal-not-found) or its full type URI"),
  keyId: str("Only requests made with this API key (its token id)"),
  from: {
    type: "string",
    description: "Only requests at or after this ISO 8601 date-time with a zone (or date); at most 7 days back",
  },
  to: { type: "string", description: "Only requests before this ISO 8601 date-time with a zone (or date)" },
});

export const requestLogSchemas: JsonSchema[] = [
  closedObject(
    {
      requestId: str("The request's X-Request-Id (quoted in every problem body as requestId)"),
      method: str("HTTP method"),
      route: str("Route template, e.g. /deals/{dealId}"),
      pathIds: {
        type: "object",
        additionalProperties: { type: "string" },
        description: 'The route\'s path parameters by name, e.g. {"dealId": "deal_…"}',
      },
      status: { type: "integer", description: "Response status" },
      problemType: nullable("string", "The problem's name (the last segment of its type URI); null for a success"),
      durationMs: { type: "number", minimum: 0, description: "Time to answer, in milliseconds" },
      keyId: str("The API key's token id (never the key)"),
      orgId: str("The key's organization, whose log holds the record"),
      actingOn: nullable("string", "The child organization a partner acted on (X-Platform-Acting-On); null when none"),
      idempotencyKey: nullable("string", "The request's Idempotency-Key; null when none"),
      createdAt: { ...timestamp, description: "When the request arrived" },
    },
    {
      id: "RequestLog",
      description:
        "One API request of the organization: what was asked and answered, never a body, a query value, a header or a key",
    },
  ),
];
