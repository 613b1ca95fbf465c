import type { FastifyInstance, FastifyRequest } from "fastify";

/** application/json and the structured `+json` types (application/merge-patch+json, …). */
const JSON_TYPES = ["application/json", /^application\/[\w.-]+\+json$/];

/** Methods whose requests fastify reads a body of (its `bodywith` methods the API uses). */
const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * True when the request brings a body that is clearly not JSON: a Content-Type of another
 * media type, or none at all. Decided on the headers alone, so the 415 comes before the API
 * key is checked (as when the body parser decided it) while nothing of the body is read; a
 * malformed Content-Type is left to the parser, after authentication.
 */
export function bringsNonJsonBody(request: FastifyRequest): boolean {
  if (!BODY_METHODS.has(request.method)) return false;
  const { headers } = request;
  const length = headers["content-length"];
  if (headers["transfer-encoding"] === undefined && (length === undefined || length === "0")) return false;
  const type = headers["content-type"];
  if (type === undefined || type.trim() === "") return true;
  const essence = type.split(";")[0]!.trim().toLowerCase();
  if (!/^[\w.+-]+\/[\w.+-]+$/.test(essence)) return false;
  return !JSON_TYPES.some((t) => (typeof t === "string" ? t === essence : t.test(essence)));
}

/** True for routes that may be called without a body: their schema declares none, or theirs is optional. */
function bodyless(request: FastifyRequest): boolean {
  const spec = request.routeOptions.config?.platformRoute;
  return spec?.schema?.body === undefined || spec.optionalBody === true;
}

/**
 * JSON bodies only: text/plain would otherwise reach handlers as a string instead of a 415.
 * An empty body under a JSON content type is accepted on routes that take no body or an
 * optional one (POST …/test, POST …/rotate-secret, DELETE): many HTTP clients send the header on
 * every request.
 * Where a body is expected, empty stays 400 malformed-json.
 */
export function installJsonBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser(["text/plain", "application/json"]);
  for (const type of JSON_TYPES) {
    app.addContentTypeParser(type, { parseAs: "string" }, (request, body, done) => {
      if (body === "" && bodyless(request)) {
        done(null, undefined);
        return;
      }
      // parseAs "string" hands a string; the type also admits the Buffer of parseAs "buffer".
      parseJson(request, body.toString(), done);
    });
  }
}
