import type { FastifyInstance, FastifyRequest } from "fastify";

/** application/json and the structured `+json` types (application/merge-patch+json, …). */
const JSON_TYPES = ["application/json", /^application\/[\w.-]+\+json$/];

/** True for routes that take no body: their schema declares none. */
function bodyless(request: FastifyRequest): boolean {
  return request.routeOptions.config?.platformRoute?.schema?.body === undefined;
}

/**
 * JSON bodies only: text/plain would otherwise reach handlers as a string instead of a 415.
 * An empty body under a JSON content type is accepted on routes that take no body (POST
 * …/test, POST …/rotate-secret, DELETE): many HTTP clients send the header on every request.
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
