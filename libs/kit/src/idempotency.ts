import { createHash } from "node:crypto";
import type { Clock } from "./clock.js";
import type { RequestFingerprint } from "./context.js";
import type { Db, Queryable } from "./db.js";
import { problem } from "./problems.js";

/** How long a stored response is replayed (the spec's replay window). */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

export interface IdempotencyScope {
  tokenId: string;
  /** The child org when delegating; keys of a parent and of each child never collide. */
  actingOrgId?: string;
  /** The Idempotency-Key header; its presence and length (≤ 255) are checked at the gateway. */
  key: string;
  /** `hashRequest` of the request body, or `fingerprintHash` of the HTTP request's parts. */
  requestHash: string;
}

export interface IdempotentResult {
  status: number;
  body: unknown;
  /** True when the stored response of an earlier request is returned without running `fn`. */
  replayed: boolean;
}

/** Stable JSON: object keys sorted at every level, so key order does not change the hash. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, v: unknown) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    );
  });
}

/** SHA-256 (hex) of the canonical JSON of a request body. */
export function hashRequest(body: unknown): string {
  return createHash("sha256").update(canonicalJson(body)).digest("hex");
}

const FINGERPRINT_PREFIX = "fp1:";

/** The stored hash of a request known part by part, so a conflict can name the part that differs. */
export function fingerprintHash(fp: RequestFingerprint): string {
  return `${FINGERPRINT_PREFIX}${fp.target}.${fp.query}.${fp.body}`;
}

function fingerprintOf(hash: string): RequestFingerprint | undefined {
  if (!hash.startsWith(FINGERPRINT_PREFIX)) return undefined;
  const [target, query, body] = hash.slice(FINGERPRINT_PREFIX.length).split(".");
  return target !== undefined && query !== undefined && body !== undefined ? { target, query, body } : undefined;
}

/** 422 idempotency-key-conflict, saying what differs from the request that first used the key. */
export function idempotencyConflict(storedHash: string, requestHash: string) {
  const before = fingerprintOf(storedHash);
  const now = fingerprintOf(requestHash);
  let what = "a different request";
  if (before && now) {
    if (before.target !== now.target) what = "another endpoint (a different method or path)";
    else if (before.query !== now.query && before.body !== now.body) what = "a different query string and body";
    else if (before.query !== now.query) what = "a different query string";
    else what = "a different request body";
  }
  return problem(
    "idempotency-key-conflict",
    `This Idempotency-Key was already used with ${what}; send the same request to replay it, or use a new key.`,
  );
}

interface KeyRow {
  request_hash: string;
  status_code: number | null;
  response: unknown;
}

/**
 * Runs a write at most once per idempotency key, in ONE transaction with the write
 * itself. Claiming the key is an insert on its primary key: a concurrent duplicate blocks
 * there until the first commits, then replays its response (or claims the key if the
 * first rolled back). A key reused with another body is 422 idempotency-key-conflict.
 * When `fn` throws (a problem included), everything rolls back and the key is free again.
 * Records older than the retention window, by `clock`, count as absent.
 * `body` must be JSON-serialisable; a replay returns it as parsed JSON.
 */
export async function runIdempotent(
  db: Db,
  scope: IdempotencyScope,
  clock: Clock,
  fn: (q: Queryable) => Promise<{ status: number; body: unknown }>,
): Promise<IdempotentResult> {
  const table = `${db.schema}.idempotency_keys`;
  const pk = [scope.tokenId, scope.actingOrgId ?? "", scope.key];
  return db.tx(async (q) => {
    const now = clock.now();
    // One statement claims the key: a new row, or in place of a record past the retention
    // window (which counts as absent). A live record, or one a concurrent request has not
    // committed yet (the insert waits for it), returns no row.
    const claimed = await q.query(
      `INSERT INTO ${table} AS k (token_id, acting_org_id, key, request_hash, created_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (token_id, acting_org_id, key) DO UPDATE
         SET request_hash = EXCLUDED.request_hash, created_at = EXCLUDED.created_at, status_code = NULL, response = NULL
         WHERE k.created_at <= $6
       RETURNING key`,
      [...pk, scope.requestHash, now, new Date(now.getTime() - IDEMPOTENCY_RETENTION_MS)],
    );
    if (claimed.length === 0) {
      const [row] = await q.query<KeyRow>(
        `SELECT request_hash, status_code, response FROM ${table} WHERE token_id = $1 AND acting_org_id = $2 AND key = $3`,
        pk,
      );
      // Only reachable if another request expired and deleted the row in between: ask for a retry.
      if (!row || row.status_code === null) throw problem("service-unavailable", "Concurrent request; retry.");
      if (row.request_hash !== scope.requestHash) {
        throw idempotencyConflict(row.request_hash, scope.requestHash);
      }
      return { status: row.status_code, body: row.response, replayed: true };
    }
    const result = await fn(q);
    // Deferred: sent before the COMMIT with whatever `fn` deferred (its outbox rows), one round trip.
    q.defer(
      `UPDATE ${table} SET status_code = $4, response = $5::jsonb WHERE token_id = $1 AND acting_org_id = $2 AND key = $3`,
      [...pk, result.status, JSON.stringify(result.body ?? null)],
    );
    return { status: result.status, body: result.body, replayed: false };
  });
}

/**
 * The stored response of an earlier request with this key, read without claiming anything:
 * undefined when there is none yet (or it expired, or is still running); 422
 * idempotency-key-conflict when the key was used with another body. Lets a write skip work
 * that must happen before its transaction (calls to other services) when it is a replay;
 * `runIdempotent` still decides for the requests that race past it.
 */
export async function storedResponse(
  db: Db,
  scope: IdempotencyScope,
  clock: Clock,
): Promise<IdempotentResult | undefined> {
  const [row] = await db.query<KeyRow>(
    `SELECT request_hash, status_code, response FROM ${db.schema}.idempotency_keys
      WHERE token_id = $1 AND acting_org_id = $2 AND key = $3 AND created_at > $4 AND status_code IS NOT NULL`,
    [scope.tokenId, scope.actingOrgId ?? "", scope.key, new Date(clock.now().getTime() - IDEMPOTENCY_RETENTION_MS)],
  );
  if (!row || row.status_code === null) return undefined;
  if (row.request_hash !== scope.requestHash) {
    throw idempotencyConflict(row.request_hash, scope.requestHash);
  }
  return { status: row.status_code, body: row.response, replayed: true };
}

/** Deletes records past the retention window; run it now and then (they no longer replay anyway). */
export async function purgeIdempotencyKeys(db: Db, clock: Clock): Promise<number> {
  const rows = await db.query(`DELETE FROM ${db.schema}.idempotency_keys WHERE created_at <= $1 RETURNING key`, [
    new Date(clock.now().getTime() - IDEMPOTENCY_RETENTION_MS),
  ]);
  return rows.length;
}
