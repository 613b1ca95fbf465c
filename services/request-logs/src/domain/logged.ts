import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { RequestLogged } from "@platform/contracts/events/request-logs";
import type { RequestLogRecord } from "./request-log.js";

/**
 * A published summary as a record; undefined for one without the fields every record has (a
 * request id, an org, a key, a time), which a gateway never sends: such an entry is skipped,
 * not the whole batch.
 */
export function recordOf(logged: RequestLogged): RequestLogRecord | undefined {
  if (!logged.requestId || !logged.orgId || !logged.keyId || !logged.time || !logged.method) return undefined;
  return {
    requestId: logged.requestId,
    orgId: logged.orgId,
    createdAt: timestampDate(logged.time),
    method: logged.method,
    route: logged.route,
    pathIds: { ...logged.pathIds },
    status: logged.status,
    problemType: logged.problemType || null,
    durationMs: logged.durationMs,
    keyId: logged.keyId,
    actingOn: logged.actingOn || null,
    idempotencyKey: logged.idempotencyKey || null,
  };
}
