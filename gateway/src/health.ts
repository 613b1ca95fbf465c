import { buildInfo } from "@platform/kit/build-info";
import { problemFromError } from "@platform/kit/connect";
import { problem } from "@platform/kit/problems";
import { withCallTrace } from "@platform/kit/rpc-telemetry";
import type { FastifyInstance } from "fastify";
import { sendProblem } from "./errors.js";
import type { ContextSigner, ServiceClients } from "./services.js";

/** A hash no key has: identity answers it with "unknown", which proves it is up. */
const PROBE_HASH = "0".repeat(64);

/**
 * Liveness and readiness for the orchestrator; outside the API, no key. Readiness probes
 * identity alone: it authenticates every request, so without it nothing can be served, while
 * another service being down fails only its own routes (503) and is no reason to take the
 * whole gateway out of rotation. Draining (closing after SIGTERM), it is not ready.
 */
export function registerHealth(
  app: FastifyInstance,
  deps: { clients: ServiceClients; sign: ContextSigner; docsUrl: string },
): void {
  const hidden = { schema: { hide: true } };
  // From the moment it starts closing (SIGTERM) the gateway is not ready, so the orchestrator
  // sends it nothing new while it drains the requests in flight.
  let draining = false;
  app.addHook("preClose", (done) => {
    draining = true;
    done();
  });
  // Which build answers: during a rolling update old and new instances answer side by side.
  const live = { status: "ok", ...buildInfo() };
  app.get("/healthz", hidden, async () => live);
  app.get("/readyz", hidden, async (request, reply) => {
    if (draining) {
      return sendProblem(reply, problem("service-unavailable", "The gateway is shutting down."), deps.docsUrl);
    }
    try {
      await deps.clients.identity.gatewayAuth.resolveApiKey(
        { keyHash: PROBE_HASH },
        withCallTrace(deps.sign({ principal: "gateway", requestId: request.id }), request.traceContext),
      );
    } catch (err) {
      // Any problem with a 4xx status is identity answering; only failing to answer is not ready.
      if (problemFromError(err).status >= 500) {
        request.log.warn({ err }, "identity not ready");
        return sendProblem(
          reply,
          problem("service-unavailable", "The identity service is not reachable."),
          deps.docsUrl,
        );
      }
    }
    return { status: "ready" };
  });
}
