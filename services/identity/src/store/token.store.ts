import type { Queryable } from "@platform/kit/db";
import type { TokenRecord } from "../domain/model.js";
import { type Changed, toToken } from "./rows.js";

/** The API tokens of each organization (only their hashes are stored). */
export interface TokenStore {
  findToken(id: string): Promise<TokenRecord | undefined>;
  findTokenByHash(keyHash: string): Promise<TokenRecord | undefined>;
  /** The tokens of those hashes that have one, in no particular order. */
  findTokensByHashes(keyHashes: readonly string[]): Promise<TokenRecord[]>;
  findTokens(ids: readonly string[]): Promise<TokenRecord[]>;
  /** Newest first, optionally of one organization. */
  listTokens(orgId?: string): Promise<TokenRecord[]>;
  insertToken(token: TokenRecord): Promise<void>;
  /** Undefined for an unknown token. */
  revokeToken(id: string, at: Date): Promise<Changed<TokenRecord> | undefined>;
}

export function tokenStore(q: Queryable): TokenStore {
  const store: TokenStore = {
    async findToken(id) {
      const [row] = await q.query("SELECT * FROM identity.api_tokens WHERE id = $1", [id]);
      return row && toToken(row);
    },
    async findTokenByHash(keyHash) {
      const [row] = await q.query("SELECT * FROM identity.api_tokens WHERE key_hash = $1", [keyHash]);
      return row && toToken(row);
    },
    async findTokensByHashes(keyHashes) {
      if (keyHashes.length === 0) return [];
      const rows = await q.query("SELECT * FROM identity.api_tokens WHERE key_hash = ANY($1::text[])", [keyHashes]);
      return rows.map(toToken);
    },
    async findTokens(ids) {
      if (ids.length === 0) return [];
      const rows = await q.query("SELECT * FROM identity.api_tokens WHERE id = ANY($1::text[])", [ids]);
      return rows.map(toToken);
    },
    async listTokens(orgId) {
      const rows = await q.query(
        `SELECT * FROM identity.api_tokens WHERE ($1::text IS NULL OR org_id = $1)
         ORDER BY created_at DESC, id DESC`,
        [orgId ?? null],
      );
      return rows.map(toToken);
    },
    async insertToken(t) {
      await q.query(
        `INSERT INTO identity.api_tokens (id, org_id, name, key_hash, key_preview, scopes, expires_at, revoked_at,
           created_at)
         VALUES ($1, $2, $3, $4, $5, $6::text[], $7, $8, $9)`,
        [t.id, t.orgId, t.name, t.keyHash, t.keyPreview, t.scopes, t.expiresAt, t.revokedAt, t.createdAt],
      );
    },
    async revokeToken(id, at) {
      // The conditional update takes the row lock, so of two concurrent revocations one changes it.
      const [row] = await q.query(
        "UPDATE identity.api_tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL RETURNING *",
        [id, at],
      );
      if (row) return { record: toToken(row), changed: true };
      const existing = await store.findToken(id);
      return existing && { record: existing, changed: false };
    },
  };
  return store;
}
