import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { type RequestLogged, RequestsLoggedSchema } from "@platform/contracts/events/request-logs";
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

/** The records of a batch in its JSON form (RequestsLogged), entries without the essentials skipped; throws when it is not one. */
export function recordsOfBatch(data: unknown): RequestLogRecord[] {
  const batch = fromJson(RequestsLoggedSchema, data as JsonValue, { ignoreUnknownFields: true });
  const records: RequestLogRecord[] = [];
  for (const logged of batch.requests) {
    const record = recordOf(logged);
    if (record) records.push(record);
  }
  return records;
}
