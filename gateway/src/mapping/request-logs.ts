import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { RequestLog } from "@platform/contracts/request-logs";

/** A request log as the API writes it: proto3's "" back to null. */
export function requestLogJson(r: RequestLog) {
  return {
    requestId: r.requestId,
    method: r.method,
    route: r.route,
    pathIds: r.pathIds,
    status: r.status,
    problemType: r.problemType || null,
    durationMs: r.durationMs,
    keyId: r.keyId,
    orgId: r.orgId,
    actingOn: r.actingOn || null,
    idempotencyKey: r.idempotencyKey || null,
    createdAt: r.createdAt ? timestampDate(r.createdAt).toISOString() : null,
  };
}
