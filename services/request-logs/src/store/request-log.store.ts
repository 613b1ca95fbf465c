import type { Queryable, Row } from "@platform/kit/db";
import { type Keyed, keysetRows, type PageQuery, params, type SortKey } from "@platform/kit/keyset";
import type { RequestLogFilter, RequestLogRecord } from "../domain/request-log.js";

export const REQUEST_LOG_SORT_KEYS: Record<string, SortKey> = {
  createdAt: { expr: "l.created_at", type: "timestamptz", nullable: false },
};

const COLUMNS =
  "org_id, request_id, created_at, method, route, path_ids, status, problem_type, duration_ms, key_id, acting_on, idempotency_key";

function toRecord(r: Row): RequestLogRecord {
  return {
    requestId: String(r.request_id),
    orgId: String(r.org_id),
    createdAt: new Date(r.created_at as string | Date),
    method: String(r.method),
    route: String(r.route),
    // pg parses jsonb; PGlite may hand back its text.
    pathIds: (typeof r.path_ids === "string" ? JSON.parse(r.path_ids) : r.path_ids) as Record<string, string>,
    status: Number(r.status),
    problemType: r.problem_type === null ? null : String(r.problem_type),
    durationMs: Number(r.duration_ms),
    keyId: String(r.key_id),
    actingOn: r.acting_on === null ? null : String(r.acting_on),
    idempotencyKey: r.idempotency_key === null ? null : String(r.idempotency_key),
  };
}

export interface RequestLogStore {
  /**
   * Inserts the records in one statement; one already stored (same org, request id and time:
   * a redelivered batch) is skipped. Resolves to how many were new. Their days' partitions
   * must exist.
   */
  insertRequestLogs(records: readonly RequestLogRecord[]): Promise<number>;
  /** One page of the org's records matching `filter`, in the page's order (newest first). */
  listRequestLogs(orgId: string, filter: RequestLogFilter, page: PageQuery): Promise<Keyed<RequestLogRecord>[]>;
  /** The org's newest record of `requestId` at or after `from`; undefined when there is none. */
  findRequestLog(orgId: string, requestId: string, from: Date): Promise<RequestLogRecord | undefined>;
}

export function requestLogStore(q: Queryable): RequestLogStore {
  return {
    async insertRequestLogs(records) {
      if (records.length === 0) return 0;
      // One array per column through unnest: one statement and one plan whatever the batch size.
      const inserted = await q.query(
        `INSERT INTO request_logs.request_logs (${COLUMNS})
         SELECT o, r, c, m, rt, p::jsonb, s, pt, d, k, a, i
           FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::text[], $6::text[],
             $7::int[], $8::text[], $9::float8[], $10::text[], $11::text[], $12::text[])
             AS t(o, r, c, m, rt, p, s, pt, d, k, a, i)
         ON CONFLICT DO NOTHING RETURNING request_id`,
        [
          records.map((r) => r.orgId),
          records.map((r) => r.requestId),
          records.map((r) => r.createdAt.toISOString()),
          records.map((r) => r.method),
          records.map((r) => r.route),
          records.map((r) => JSON.stringify(r.pathIds)),
          records.map((r) => r.status),
          records.map((r) => r.problemType),
          records.map((r) => r.durationMs),
          records.map((r) => r.keyId),
          records.map((r) => r.actingOn),
          records.map((r) => r.idempotencyKey),
        ],
      );
      return inserted.length;
    },

    async listRequestLogs(orgId, filter, page) {
      const p = params();
      const where = [`l.org_id = ${p.add(orgId)}`, `l.created_at >= ${p.add(filter.from)}`];
      if (filter.to) where.push(`l.created_at < ${p.add(filter.to)}`);
      if (filter.status !== undefined) where.push(`l.status = ${p.add(filter.status)}`);
      if (filter.statusRange) {
        where.push(`l.status >= ${p.add(filter.statusRange[0])} AND l.status < ${p.add(filter.statusRange[1])}`);
      }
      if (filter.method !== undefined) where.push(`l.method = ${p.add(filter.method)}`);
      if (filter.route !== undefined) where.push(`l.route = ${p.add(filter.route)}`);
      if (filter.problemType !== undefined) where.push(`l.problem_type = ${p.add(filter.problemType)}`);
      if (filter.keyId !== undefined) where.push(`l.key_id = ${p.add(filter.keyId)}`);
      // Ties in time go by request id, unique enough within an org's millisecond.
      const source = { columns: "l.*", from: "request_logs.request_logs l", where, idExpr: "l.request_id" };
      return keysetRows(q, source, page, p, toRecord);
    },

    async findRequestLog(orgId, requestId, from) {
      const [row] = await q.query(
        `SELECT ${COLUMNS} FROM request_logs.request_logs
          WHERE org_id = $1 AND request_id = $2 AND created_at >= $3 ORDER BY created_at DESC LIMIT 1`,
        [orgId, requestId, from],
      );
      return row ? toRecord(row) : undefined;
    },
  };
}
