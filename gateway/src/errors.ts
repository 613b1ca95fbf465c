import { ConnectError } from "@connectrpc/connect";
import { problemFromError } from "@platform/kit/connect";
import { ProblemError, problem, problemBody } from "@platform/kit/problems";
import type { ErrorObject } from "ajv";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AllowedMethods } from "./allowed-methods.js";
import { REQUEST_ID_HEADER } from "./request-id.js";
import { validationProblem } from "./validation.js";

const PROBLEM_CONTENT_TYPE = "application/problem+json";

/** Fastify's own request errors, as the spec's problems. */
const FASTIFY_PROBLEMS: Record<string, () => ProblemError> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    problem("unsupported-media-type", "Request bodies must be JSON (Content-Type: application/json)."),
  FST_ERR_CTP_BODY_TOO_LARGE: () => problem("payload-too-large", "The request body is larger than this API accepts."),
  FST_ERR_CTP_INVALID_JSON_BODY: () => problem("malformed-json", "The request body is not valid JSON."),
  FST_ERR_CTP_EMPTY_JSON_BODY: () =>
    problem("malformed-json", "The request declares a JSON body but sends an empty one."),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () =>
    problem("invalid-request", "The request body does not match its Content-Length."),
};

function isFastifyError(err: unknown): err is FastifyError {
  return err instanceof Error && typeof (err as FastifyError).code === "string";
}

/** Any error as a problem; null for the unexpected, which must not show its message. */
function toProblem(err: unknown, request: FastifyRequest): ProblemError | null {
  if (err instanceof ProblemError) return err;
  if (err instanceof ConnectError) {
    const p = problemFromError(err);
    // The gateway signs every call, so a service refusing its context means mismatched
    // secrets or clocks: the gateway's fault, never the client's credentials.
    return p.problemName === "missing-trust-header" || p.problemName === "internal" ? null : p;
  }
  if (isFastifyError(err)) {
    if (err.validation) {
      return validationProblem(
        err.validation as ErrorObject[],
        err.validationContext,
        request.routeOptions.config.platformRoute,
      );
    }
    const known = FASTIFY_PROBLEMS[err.code];
    if (known) return known();
    if (err.statusCode === 400) return problem("invalid-request", "The request is malformed.");
  }
  return null;
}

/** Seconds a client should wait before retrying a 503 (a lost database connection, a service restarting). */
const UNAVAILABLE_RETRY_AFTER_S = "1";

export function sendProblem(reply: FastifyReply, p: ProblemError, docsUrl: string): FastifyReply {
  if (p.status === 503) reply.header("retry-after", UNAVAILABLE_RETRY_AFTER_S);
  // For the request log (request-log.ts), which records the problem's name.
  reply.problemName = p.problemName;
  // Sent as text so no response schema of the route reshapes the problem.
  return reply
    .code(p.status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify(problemBody(p, docsUrl, reply.request.id)));
}

/**
 * Errors the router raises before any route or hook runs (fastify's `frameworkErrors`): a
 * path parameter longer than the router accepts cannot be a resource id, and a URL that
 * does not decode is a malformed request.
 */
export function frameworkErrorHandler(docsUrl: string) {
  return (err: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const p =
      err.code === "FST_ERR_MAX_PARAM_LENGTH"
        ? problem("invalid-resource-id", "A path parameter is too long to be a resource id.")
        : err.code === "FST_ERR_BAD_URL"
          ? problem("invalid-request", "The request URL is malformed.")
          : problem("internal", "Internal error; quote the requestId when reporting it.");
    if (p.status >= 500) request.log.error({ err }, "unexpected router error");
    reply.header(REQUEST_ID_HEADER, request.id);
    // Refused before routing, so fastify's onResponse (and its completion log line) never runs.
    reply.raw.once("finish", () => {
      request.log.info(
        { res: { statusCode: reply.raw.statusCode }, responseTime: reply.elapsedTime },
        "request completed",
      );
    });
    return sendProblem(reply, p, docsUrl);
  };
}

/** One place that turns every failure, routing misses included, into problem+json. */
export function installErrorHandling(app: FastifyInstance, opts: { docsUrl: string; allowed: AllowedMethods }): void {
  app.setErrorHandler((err, request, reply) => {
    const known = toProblem(err, request);
    if (!known) request.log.error({ err }, "unexpected error");
    // 501 is a service without the operation (not-implemented); other 5xx are a dependency failing.
    else if (known.status >= 500 && known.status !== 501) {
      request.log.warn({ err, problem: known.problemName }, "request failed");
    }
    return sendProblem(
      reply,
      known ?? problem("internal", "Internal error; quote the requestId when reporting it."),
      opts.docsUrl,
    );
  });

  const notFound = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const path = request.url.split("?")[0] ?? "/";
    const allowed = opts.allowed.at(path);
    if (allowed.length === 0) {
      return sendProblem(reply, problem("not-found", `No resource at ${path}.`), opts.docsUrl);
    }
    reply.header("allow", allowed.join(", "));
    return sendProblem(
      reply,
      problem("method-not-allowed", `${request.method} is not allowed on ${path}; use ${allowed.join(", ")}.`),
      opts.docsUrl,
    );
  };
  app.setNotFoundHandler(notFound);
  // A request to no route is answered on its headers: its body (which nothing would use) is
  // never read, so no client can make the gateway hold uploads without a key.
  app.addHook("onRequest", (request, reply, done) => {
    if (request.is404 && !request.raw.complete) {
      notFound(request, reply);
      return;
    }
    done();
  });
}
