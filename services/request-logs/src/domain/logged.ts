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
    requestId: storable(logged.requestId),
    orgId: storable(logged.orgId),
    createdAt: timestampDate(logged.time),
    method: storable(logged.method),
    route: storable(logged.route),
    pathIds: Object.fromEntries(Object.entries(logged.pathIds).map(([k, v]) => [storable(k), storable(v)])),
    status: logged.status,
    problemType: logged.problemType ? storable(logged.problemType) : null,
    durationMs: logged.durationMs,
    keyId: storable(logged.keyId),
    actingOn: logged.actingOn ? storable(logged.actingOn) : null,
    idempotencyKey: logged.idempotencyKey ? storable(logged.idempotencyKey) : null,
  };
}

/**
 * Text Postgres can store: a NUL (which no text column takes) replaced. One in any summary
 * failed its whole batch's insert, and a batch that cannot be inserted comes again and again,
 * holding up its partition; the gateway replaces them already, this is the store's own guard.
 */
function storable(text: string): string {
  return text.includes("\u0000") ? text.replaceAll("\u0000", "\uFFFD") : text;
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
