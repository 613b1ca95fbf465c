import type { Logger } from "@platform/kit/logger";
import type { FastifyInstance } from "fastify";

/**
 * One line per answered request, in place of fastify's two ("incoming request", "request
 * completed"): method, route template (never the raw path, which carries ids and query
 * values), status, duration, request id and the token that made it. Never the key.
 */
export function installAccessLog(app: FastifyInstance, logger: Logger): void {
  app.addHook("onResponse", (request, reply, done) => {
    logger.info(
      {
        method: request.method,
        route: request.routeOptions.url ?? "unmatched",
        status: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime * 100) / 100,
        requestId: request.id,
        tokenId: request.apiCall?.token.tokenId,
      },
      "request",
    );
    done();
  });
}
