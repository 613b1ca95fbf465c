import { randomUUID } from "node:crypto";
import { create, toJson } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { DelegatedRequestServedSchema } from "@platform/contracts/events/gateway";
import type { EventBus } from "@platform/kit/bus";
import type { Clock } from "@platform/kit/clock";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import type { Logger } from "@platform/kit/logger";
import { toBusMessage } from "@platform/kit/outbox";
import type { FastifyInstance } from "fastify";

/**
 * The spec's delegation audit: every response to a request that acted on a child (it passed
 * the delegation check) is published as DelegatedRequestServed, keyed by the parent so one
 * partner's records stay in order.
 *
 * The record is published after the response is sent and never awaited: an audit bus that
 * is slow or down must not slow or fail the API. While it is down the first failure is
 * logged and the rest are only counted, so an outage does not log once per request.
 */
export function installDelegationAudit(app: FastifyInstance, deps: { bus: EventBus; clock: Clock; logger: Logger }) {
  let failures = 0;
  const published = () => {
    if (failures === 0) return;
    deps.logger.warn({ lost: failures }, "delegation audit events are published again; some were lost meanwhile");
    failures = 0;
  };
  const failed = (err: unknown) => {
    failures += 1;
    if (failures === 1) deps.logger.warn({ err }, "cannot publish delegation audit events; counting until it recovers");
  };

  app.addHook("onResponse", async (request, reply) => {
    const call = request.apiCall;
    if (!call?.actingOn) return;
    const now = deps.clock.now();
    const data = create(DelegatedRequestServedSchema, {
      parentOrgId: call.token.orgId,
      orgId: call.actingOn,
      tokenId: call.token.tokenId,
      method: request.method,
      path: request.url.split("?")[0] ?? request.url,
      status: reply.statusCode,
      requestId: request.id,
      time: timestampFromDate(now),
    });
    const message = toBusMessage(
      {
        id: randomUUID(),
        type: EVENT_TYPES.delegatedRequestServed,
        source: "gateway",
        subject: call.actingOn,
        time: now.toISOString(),
        data: toJson(DelegatedRequestServedSchema, data),
      },
      call.token.orgId,
    );
    deps.bus.publish(TOPICS.gateway, [message]).then(published, failed);
  });
}
