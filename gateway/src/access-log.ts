import { trace } from "@opentelemetry/api";
import { infoLineWriter, type Logger } from "@platform/kit/logger";
import { type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from "fastify";

/**
 * fastify's own per-request lines, made to fit the access log: "incoming request" only at
 * debug level (it shows what is in flight while debugging, and a shutdown test watches it),
 * "request completed" and "Route … not found" not at all (the access line says both), a
 * failed response still at error level, and the stream and header warnings as fastify has them.
 */
export class AccessLogController extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, "incoming request");
  }

  override requestCompleted(error: Error | null | undefined, _request: FastifyRequest, reply: FastifyReply): void {
    if (error) reply.log.error({ res: reply, err: error, responseTime: reply.elapsedTime }, "request errored");
  }

  override routeNotFound(): void {}
}

/**
 * One line per answered request, in place of fastify's two ("incoming request", "request
 * completed"): method, route template (never the raw path, which carries ids and query
 * values), status, duration, request id and the token that made it. Never the key.
 */
export function installAccessLog(app: FastifyInstance, logger: Logger): void {
  // The line written straight to the log's stream when the logger is kit's (with the request's
  // trace ids while tracing): the same bytes as pino's for a fifth of the CPU (logger.ts says why).
  const writeLine = infoLineWriter(logger);
  app.addHook("onResponse", (request, reply, done) => {
    // The request's trace, entered or not (http-server-span.ts): the line carries its ids either way.
    const traced = request.traceContext ? trace.getSpanContext(request.traceContext) : undefined;
    const route = request.routeOptions.url ?? "unmatched";
    const durationMs = Math.round(reply.elapsedTime * 100) / 100;
    const tokenId = request.apiCall?.token.tokenId;
    const written =
      writeLine?.(
        `"method":${JSON.stringify(request.method)},"route":${JSON.stringify(route)},"status":${reply.statusCode}` +
          `,"durationMs":${JSON.stringify(durationMs)},"requestId":${JSON.stringify(request.id)}` +
          (tokenId === undefined ? "" : `,"tokenId":${JSON.stringify(tokenId)}`),
        "request",
        traced,
      ) ?? false;
    if (!written) {
      // pino's mixin adds the active span's ids; an unentered trace's are added here.
      const ids =
        traced && !trace.getActiveSpan()
          ? { trace_id: traced.traceId, span_id: traced.spanId, trace_flags: traced.traceFlags }
          : {};
      logger.info(
        { ...ids, method: request.method, route, status: reply.statusCode, durationMs, requestId: request.id, tokenId },
        "request",
      );
    }
    done();
  });
}
