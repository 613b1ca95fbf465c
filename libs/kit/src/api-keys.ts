import { createHash, createHmac, randomBytes } from "node:crypto";

/**
 * API keys: a fixed 8-character live prefix and 48 URL-safe random characters (36 random
 * bytes in base64url), 56 in all. Only the SHA-256 hash is ever stored.
 */
export const API_KEY_PREFIX = "pk_live_";
export const API_KEY_LENGTH = 56;
const API_KEY_SHAPE = /^pk_live_[A-Za-z0-9_-]{48}$/;

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(36).toString("base64url");
}

/** The sandbox's keys are derived from its seed so they survive re-seeding. */
export function seededApiKey(seed: string, name: string): string {
  return (
    API_KEY_PREFIX + createHmac("sha512", seed).update(`api-key:${name}`).digest().subarray(0, 36).toString("base64url")
  );
}

export function isApiKeyShape(raw: string): boolean {
  return API_KEY_SHAPE.test(raw);
}

export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** The first 12 characters, enough to recognise a key in a list without revealing it. */
export function apiKeyPreview(key: string): string {
  return `${key.slice(0, 12)}…`;
}

export type TokenState = "active" | "expired" | "revoked";

/** Revocation wins over expiry: a revoked key is unknown to the gateway, an expired one is not. */
export function tokenState(token: { expiresAt: Date | null; revokedAt: Date | null }, now: Date): TokenState {
  if (token.revokedAt) return "revoked";
  if (token.expiresAt && token.expiresAt.getTime() <= now.getTime()) return "expired";
  return "active";
}
