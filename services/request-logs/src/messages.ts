import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { RequestLogSchema } from "@platform/contracts/request-logs";
import type { RequestLogRecord } from "./domain/request-log.js";

/** A record as the RPCs answer it: unset is "" (proto3), the gateway maps it back to null. */
export function requestLogMessage(r: RequestLogRecord): MessageInitShape<typeof RequestLogSchema> {
  return {
    requestId: r.requestId,
    method: r.method,
    route: r.route,
    pathIds: r.pathIds,
    status: r.status,
    problemType: r.problemType ?? "",
    durationMs: r.durationMs,
    keyId: r.keyId,
    orgId: r.orgId,
    actingOn: r.actingOn ?? "",
    idempotencyKey: r.idempotencyKey ?? "",
    createdAt: timestampFromDate(r.createdAt),
  };
}
