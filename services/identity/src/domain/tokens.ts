import { problem } from "@platform/kit/problems";

const MAX_NAME_LENGTH = 200;

/** A token's human name: trimmed, "token" when empty, at most 200 characters. */
export function tokenName(raw: string): string {
  const name = raw.trim() || "token";
  if (name.length > MAX_NAME_LENGTH) {
    throw problem("invalid-field", `Token name is longer than ${MAX_NAME_LENGTH} characters.`, { field: "name" });
  }
  return name;
}

export type TokenState = "active" | "expired" | "revoked";

/** Revocation wins over expiry: a revoked key is unknown to the gateway, an expired one is not. */
export function tokenState(token: { expiresAt: Date | null; revokedAt: Date | null }, now: Date): TokenState {
  if (token.revokedAt) return "revoked";
  if (token.expiresAt && token.expiresAt.getTime() <= now.getTime()) return "expired";
  return "active";
}
