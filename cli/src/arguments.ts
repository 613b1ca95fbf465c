// The admin commands' option values: scopes, limits and times, read as the user typed them.
import { ALL_SCOPES, PARTNER_SCOPE, READ_SCOPES } from "@platform/kit/scopes";
import { CliError } from "./admin-plane.js";

export const NON_PARTNER_SCOPES = ALL_SCOPES.filter((s) => s !== PARTNER_SCOPE);

/** `a,b`, `all` (every scope in `all`), `read` (every :read scope) or `none`; the server validates names. */
export function parseScopes(raw: string, all: readonly string[]): string[] {
  const value = raw.trim();
  if (value === "all") return [...all];
  if (value === "read") return [...READ_SCOPES];
  if (value === "none" || value === "") return [];
  return value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

export const MAX_AUDIT_LIMIT = 500;

export function parseAuditLimit(raw: string): number {
  const n = /^\d+$/.test(raw.trim()) ? Number(raw) : Number.NaN;
  if (!(n >= 1 && n <= MAX_AUDIT_LIMIT)) {
    throw new CliError(`--limit must be an integer from 1 to ${MAX_AUDIT_LIMIT}, not '${raw}'`);
  }
  return n;
}

export function parseTime(raw: string, flag: string): Date {
  const ms = Date.parse(raw);
  if (Number.isNaN(ms))
    throw new CliError(`${flag} must be an ISO 8601 time such as 2026-12-31T23:59:59Z, not '${raw}'`);
  return new Date(ms);
}
