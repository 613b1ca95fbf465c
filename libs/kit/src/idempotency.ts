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

/** The key's table and primary-key values. */
function recordOf(db: Db, scope: IdempotencyScope) {
  return { table: `${db.schema}.idempotency_keys`, pk: [scope.tokenId, scope.actingOrgId ?? "", scope.key] };
}

/** A finished record's answer to this request: its stored response, or 422 when it was made for another request. */
function replayOfRecord(row: KeyRow & { status_code: number }, scope: IdempotencyScope): IdempotentResult {
  if (row.request_hash !== scope.requestHash) throw idempotencyConflict(row.request_hash, scope.requestHash);
  return { status: row.status_code, body: row.response, replayed: true };
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
  const { table, pk } = recordOf(db, scope);
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
      return replayOfRecord({ ...row, status_code: row.status_code }, scope);
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

const UNIQUE_VIOLATION = "23505";
/** Claims of one key before a write gives up: more than two means other requests keep racing for it. */
const MAX_CLAIMS = 3;

/** The claim of a key that a live record (or a concurrent request's, committed meanwhile) holds. */
function isKeyTaken(err: unknown): boolean {
  const e = err as { code?: unknown; constraint?: unknown; message?: unknown };
  return e.code === UNIQUE_VIOLATION && `${e.constraint ?? ""} ${e.message ?? ""}`.includes("idempotency_keys");
}

/**
 * `runIdempotent` for a write that reads nothing once it starts (its reads and checks came
 * before): `fn` gets a Queryable that can only `defer`, and the key's record, complete with
 * the response, goes to Postgres with the writes `fn` deferred as ONE statement (`db.writeOnly`),
 * a transaction of its own: one round trip where `runIdempotent` takes four (BEGIN, the claim,
 * the writes, COMMIT). On this kind of VM each round trip costs ~0.1 ms of CPU across the client
 * and Postgres (docs/benchmarks/gateway.md, "The floor").
 * The claim is a plain INSERT: a live record makes the statement, and with it the whole
 * write, fail with unique_violation; then its response is replayed, or 422
 * idempotency-key-conflict. A concurrent request with the key waits in that INSERT until the
 * first commits (then replays) or fails (then claims). A record past the retention window
 * counts as absent: it is deleted and the write sent again.
 */
export async function runIdempotentStatement(
  db: Db,
  scope: IdempotencyScope,
  clock: Clock,
  fn: (q: Queryable) => Promise<{ status: number; body: unknown }>,
): Promise<IdempotentResult> {
  const { table, pk } = recordOf(db, scope);
  // A retry follows only an expired record (deleted) or one gone meanwhile (purged): the next
  // pass claims the key, or finds the live record of a request that claimed it meanwhile.
  for (let attempt = 1; ; attempt++) {
    const now = clock.now();
    try {
      return await db.writeOnly(async (q) => {
        const result = await fn(q);
        q.defer(
          `INSERT INTO ${table} (token_id, acting_org_id, key, request_hash, status_code, response, created_at)
           VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)`,
          [...pk, scope.requestHash, result.status, JSON.stringify(result.body ?? null), now],
        );
        return { status: result.status, body: result.body, replayed: false };
      });
    } catch (err) {
      if (!isKeyTaken(err)) throw err;
      if (attempt === MAX_CLAIMS) throw problem("service-unavailable", "Concurrent request; retry.");
    }
    const [row] = await db.query<KeyRow & { created_at: Date | string }>(
      `SELECT request_hash, status_code, response, created_at FROM ${table}
        WHERE token_id = $1 AND acting_org_id = $2 AND key = $3`,
      pk,
    );
    const expiredBefore = new Date(now.getTime() - IDEMPOTENCY_RETENTION_MS);
    if (row && new Date(row.created_at) > expiredBefore) {
      // Only a committed record is seen here, and a committed record has its response.
      if (row.status_code === null) throw problem("service-unavailable", "Concurrent request; retry.");
      return replayOfRecord({ ...row, status_code: row.status_code }, scope);
    }
    await db.query(
      `DELETE FROM ${table} WHERE token_id = $1 AND acting_org_id = $2 AND key = $3 AND created_at <= $4`,
      [...pk, expiredBefore],
    );
  }
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
  const { table, pk } = recordOf(db, scope);
  const [row] = await db.query<KeyRow>(
    `SELECT request_hash, status_code, response FROM ${table}
      WHERE token_id = $1 AND acting_org_id = $2 AND key = $3 AND created_at > $4 AND status_code IS NOT NULL`,
    [...pk, new Date(clock.now().getTime() - IDEMPOTENCY_RETENTION_MS)],
  );
  if (!row || row.status_code === null) return undefined;
  return replayOfRecord({ ...row, status_code: row.status_code }, scope);
}

/** Deletes records past the retention window; run it now and then (they no longer replay anyway). */
export async function purgeIdempotencyKeys(db: Db, clock: Clock): Promise<number> {
  const rows = await db.query(`DELETE FROM ${db.schema}.idempotency_keys WHERE created_at <= $1 RETURNING key`, [
    new Date(clock.now().getTime() - IDEMPOTENCY_RETENTION_MS),
  ]);
  return rows.length;
}
