import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import { PROBLEM_CATALOG, type ProblemName } from "@platform/kit/problems";
import type { FastifyInstance, FastifySchema } from "fastify";
import { OPENAPI_TAGS } from "./openapi-tags.js";
import { documentWebhooks } from "./openapi-webhooks.js";
import { DAILY_QUOTA, TIER_LIMITS } from "./rate-limit/limiter.js";
import { API_PREFIX, type RouteSpec, requiredScopes } from "./route.js";
import type { JsonSchema } from "./schemas/common.js";

const header = (description: string) => ({ type: "string", description });

const REQUEST_ID_HEADER = {
  "X-Request-Id": header("Id of this request (the caller's X-Request-Id when it sent a usable one)"),
};
const RATE_LIMIT_HEADERS = {
  RateLimit: header('Remaining quota of the tier bucket, e.g. "read";r=299;t=60 (t: seconds until it grows again)'),
  "RateLimit-Policy": header('The tier bucket, e.g. "read";q=300;w=60'),
};
const SUCCESS_HEADERS = { ...REQUEST_ID_HEADER, ...RATE_LIMIT_HEADERS };
/** Problems a request gets before it is counted (API key, scopes, delegation) carry no RateLimit headers. */
const UNCOUNTED_STATUSES = new Set([401]);

function problemsOf(spec: RouteSpec): ProblemName[] {
  const names: ProblemName[] = [
    "missing-trust-header",
    "unknown-subscription",
    "subscription-expired",
    "insufficient-scope",
    "invalid-acting-on-org",
    "rate-limit-exceeded",
    "internal",
    "service-unavailable",
    "upstream-timeout",
  ];
  if (spec.actingOn !== "forbidden") {
    names.push("delegation-scope-required", "cross-org-delegation-forbidden", "delegation-scope-insufficient");
  }
  if (spec.readOnlyTokenProblem) names.push(spec.readOnlyTokenProblem);
  if (spec.ids) names.push("invalid-resource-id");
  // A route with its own problem for a bad body (invalidBody) answers invalid-field only for the rest.
  if (spec.schema?.querystring || (spec.schema?.body && !spec.invalidBody) || spec.idempotencyKey) {
    names.push("invalid-field");
  }
  if (spec.idempotencyKey) names.push("idempotency-key-required", "idempotency-key-conflict");
  if (spec.ifMatch) names.push("precondition-failed");
  if (spec.page) names.push("invalid-cursor", "invalid-sort-field");
  // Any query parameter the route does not declare is refused (http/strict-query.ts).
  names.push("invalid-filter");
  if (spec.method !== "GET" && spec.method !== "DELETE") {
    names.push("malformed-json", "unsupported-media-type", "payload-too-large", "request-timeout");
  }
  if (spec.invalidBody) names.push(spec.invalidBody);
  names.push(...(spec.problems ?? []));
  return [...new Set(names)];
}

function errorResponses(spec: RouteSpec): Record<string, JsonSchema> {
  const byStatus = new Map<number, ProblemName[]>();
  for (const name of problemsOf(spec)) {
    const { status } = PROBLEM_CATALOG[name];
    byStatus.set(status, [...(byStatus.get(status) ?? []), name]);
  }
  const out: Record<string, JsonSchema> = {};
  for (const [status, names] of [...byStatus].sort(([a], [b]) => a - b)) {
    out[status] = {
      description: `Problem types: ${names.join(", ")}`,
      headers: {
        ...REQUEST_ID_HEADER,
        // Every answer after the rate limiter counted the request says what is left (4xx and 5xx too).
        ...(UNCOUNTED_STATUSES.has(status) ? {} : RATE_LIMIT_HEADERS),
        ...(status === 429 ? { "Retry-After": header("Seconds until the request would be accepted") } : {}),
        ...(status === 503 ? { "Retry-After": header("Seconds to wait before retrying") } : {}),
        ...(status === 405 ? { Allow: header("Methods the path supports") } : {}),
      },
      content: { "application/problem+json": { schema: { $ref: "Problem#" } } },
    };
  }
  return out;
}

const notModified = {
  type: "null",
  description: "Not Modified: the representation named in If-None-Match is current",
  headers: { ETag: header("The current validator"), ...SUCCESS_HEADERS },
};

/** Marks an operation whose body may be absent, until optionalBodies() reads it. */
const OPTIONAL_BODY = "x-platform-optional-body";

/**
 * @fastify/swagger writes `requestBody.required: true` for every route with a body schema;
 * a route that takes an optional body says so (RouteSpec.optionalBody), and its operation gets
 * `required: false`, so clients may leave the body out.
 */
function optionalBodies<T extends object>(document: T): T {
  const paths = ((document as { paths?: unknown }).paths ?? {}) as Record<
    string,
    Record<string, Record<string, unknown>>
  >;
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      if (!operation[OPTIONAL_BODY]) continue;
      delete operation[OPTIONAL_BODY];
      const body = operation.requestBody as { required?: boolean } | undefined;
      if (body) body.required = false;
    }
  }
  return document;
}

/** The OpenAPI view of a route: its runtime schema plus what the guard enforces. */
function documented(schema: FastifySchema, spec: RouteSpec): FastifySchema {
  // Single-resource GETs answer 304 to a matching If-None-Match (see http/conditional.ts).
  const conditional = spec.method === "GET" && !spec.page;
  const successHeaders = {
    ...SUCCESS_HEADERS,
    ...(spec.actingOn !== "forbidden"
      ? { "Platform-Acting-On": header("The child organization, when the request sent X-Platform-Acting-On") }
      : {}),
    ...(spec.idempotencyKey
      ? { "X-Idempotent-Replay": header("true when this is the stored response of an earlier request with the key") }
      : {}),
    ...(conditional ? { ETag: header("Validator of this representation; send it back in If-None-Match") } : {}),
    ...Object.fromEntries(Object.entries(spec.headers ?? {}).map(([name, text]) => [name, header(text)])),
  };
  const success = Object.fromEntries(
    Object.entries(spec.schema?.response ?? {}).map(([status, body]) => [
      status,
      // A response declared as null has no body (204); @fastify/swagger then lists no content.
      body.type === "null"
        ? { type: "null", description: body.description ?? "Success, no body", headers: successHeaders }
        : {
            description: "Success",
            headers: successHeaders,
            content: { [spec.responseType ?? "application/json"]: { schema: body } },
          },
    ]),
  );
  const requestHeaders: Record<string, JsonSchema> = {};
  if (spec.actingOn !== "forbidden") {
    requestHeaders["X-Platform-Acting-On"] = header(
      "Act on this child organization (org_…); needs partner:act-as-child and the child's grant",
    );
  } else {
    requestHeaders["X-Platform-Acting-On"] = header("Not allowed on this endpoint (400 invalid-acting-on-org)");
  }
  if (spec.idempotencyKey) {
    requestHeaders["Idempotency-Key"] = { ...header("Opaque key, at most 255 characters"), maxLength: 255 };
  }
  if (conditional) {
    requestHeaders["If-None-Match"] = header("ETags of representations the client has; 304 when one is current");
  }
  if (spec.ifMatch) {
    requestHeaders["If-Match"] = header(
      'The ETag W/"<version>" of the resource as last read; 412 when it changed since',
    );
  }
  const requiredHeaders = [...(spec.idempotencyKey ? ["Idempotency-Key"] : []), ...(spec.ifMatch ? ["If-Match"] : [])];
  const scopes = requiredScopes(spec)
    .map((s) => `\`${s}\``)
    .join(" and ");
  // A route open to any valid key (GET /api-keys/current) names no scope.
  const requires = scopes ? `Requires scope ${scopes}.` : "Requires a valid API key (any scope).";
  return {
    ...schema,
    ...(spec.deprecated ? { deprecated: true } : {}),
    // Copied onto the operation by @fastify/swagger (an x- key); optionalBodies() turns it into required: false.
    ...(spec.optionalBody ? { [OPTIONAL_BODY]: true } : {}),
    description: [
      spec.deprecated ? `Deprecated: ${spec.deprecated}` : "",
      requires,
      `Rate-limit tier: ${spec.tier} (${TIER_LIMITS[spec.tier]} requests per minute, ${DAILY_QUOTA} per UTC day, per token).`,
      spec.idempotencyKey ? "Idempotency-Key required." : "",
      spec.ifMatch ? "If-Match required." : "",
    ]
      .filter(Boolean)
      .join(" "),
    headers: {
      type: "object",
      properties: requestHeaders,
      ...(requiredHeaders.length > 0 ? { required: requiredHeaders } : {}),
    },
    response: {
      ...success,
      ...(conditional ? { 304: notModified } : {}),
      ...errorResponses(spec),
    },
  } as FastifySchema;
}

/** The OpenAPI 3.1 document (generated from the routes) and the human docs page. */
export async function registerOpenApi(
  app: FastifyInstance,
  opts: { docsUrl: string /** Where integrators reach this API (OpenAPI `servers`). */; serverUrl: string },
): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Platform Integration API",
        version: "v1alpha1",
        description: [
          "Server-to-server REST API of the sales-productivity platform. A preview: details may change before general availability.",
          `Errors are RFC 9457 application/problem+json; \`type\` is ${opts.docsUrl}/platform-api/errors/<error-name>.`,
        ].join("\n\n"),
        contact: { name: "Platform Integration API", url: `${opts.docsUrl}/platform-api` },
        license: { name: "Proprietary: use under the platform's API terms", url: `${opts.docsUrl}/platform-api/terms` },
      },
      servers: [{ url: opts.serverUrl, description: "This deployment" }],
      tags: [...OPENAPI_TAGS],
      components: {
        securitySchemes: {
          apiKey: {
            type: "apiKey",
            in: "header",
            name: "X-Platform-Api-Key",
            description: "The token (56 characters)",
          },
        },
      },
      security: [{ apiKey: [] }],
    },
    // Shared schemas keep their $id as their component name (Problem, Organization, …).
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === "string" ? json.$id : `def-${i}`),
    },
    transform: ({ schema, url, route }) => {
      const spec = route.config?.platformRoute;
      return { schema: spec ? documented(schema ?? {}, spec) : schema, url };
    },
    // What the webhooks POST to subscribers (OpenAPI 3.1 `webhooks`), and the event catalog.
    transformObject: (document) =>
      "openapiObject" in document ? optionalBodies(documentWebhooks(document.openapiObject)) : document.swaggerObject,
  });
  await app.register(swaggerUi, { routePrefix: "/docs" });
  app.get(`${API_PREFIX}/openapi.json`, { schema: { hide: true } }, async () => app.swagger());
}
