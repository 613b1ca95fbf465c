import { parseSort, type Sort } from "@platform/kit/pagination";
import { problem } from "@platform/kit/problems";
import { LICENSE_TIERS, type LicenseTierSlug, ROLES, type Role } from "./model.js";

export const USER_SORT_FIELDS = ["updatedAt", "createdAt", "lastLoginAt", "email", "firstName", "lastName"];
export const USER_DEFAULT_SORT = "-createdAt";
export const MANAGED_SORT_FIELDS = ["updatedAt", "createdAt", "name", "seats.total"];
export const MANAGED_DEFAULT_SORT = "-updatedAt";

export function userSort(raw: string): Sort {
  return parseSort(raw, USER_SORT_FIELDS, USER_DEFAULT_SORT);
}

export function managedSort(raw: string): Sort {
  return parseSort(raw, MANAGED_SORT_FIELDS, MANAGED_DEFAULT_SORT);
}

export interface UserFilters {
  /** Case-insensitive substring of email, first, last or display name; empty for any. */
  search: string;
  role?: Role;
  /** Active users only (true), deactivated only (false), or both (undefined). */
  active?: boolean;
  /** Users updated at or after this time. */
  since?: Date;
}

const ACTIVE_FILTERS: Record<string, boolean | undefined> = { "": true, true: true, false: false, all: undefined };

export function userFilters(req: {
  search: string;
  role: string;
  active: string;
  since?: Date | undefined;
}): UserFilters {
  if (req.role !== "" && !(ROLES as readonly string[]).includes(req.role)) {
    throw problem("invalid-filter", `role filter '${req.role}' is not one of: ${ROLES.join(", ")}.`);
  }
  if (!Object.hasOwn(ACTIVE_FILTERS, req.active)) {
    throw problem("invalid-filter", `active filter '${req.active}' is not one of: true, false, all.`);
  }
  const active = ACTIVE_FILTERS[req.active];
  return {
    search: req.search.trim(),
    ...(req.role !== "" ? { role: req.role as Role } : {}),
    ...(active !== undefined ? { active } : {}),
    ...(req.since ? { since: req.since } : {}),
  };
}

/** The licenseTier filter values of the spec (free is not one of them). */
const FILTERABLE_TIERS: readonly LicenseTierSlug[] = LICENSE_TIERS.filter((t) => t !== "free");

export interface ManagedFilters {
  /** Case-insensitive substring of the name; empty for any. */
  search: string;
  /** Exact industry; empty for any. */
  industry: string;
  licenseTier?: LicenseTierSlug;
  hasActiveIssues?: boolean;
}

export function managedFilters(req: {
  search: string;
  industry: string;
  licenseTier: string;
  hasActiveIssues?: boolean | undefined;
}): ManagedFilters {
  if (req.licenseTier !== "" && !(FILTERABLE_TIERS as readonly string[]).includes(req.licenseTier)) {
    throw problem(
      "invalid-filter",
      `licenseTier filter '${req.licenseTier}' is not one of: ${FILTERABLE_TIERS.join(", ")}.`,
    );
  }
  return {
    search: req.search.trim(),
    industry: req.industry,
    ...(req.licenseTier !== "" ? { licenseTier: req.licenseTier as LicenseTierSlug } : {}),
    ...(req.hasActiveIssues !== undefined ? { hasActiveIssues: req.hasActiveIssues } : {}),
  };
}

const AUDIT_DEFAULT_LIMIT = 50;
const AUDIT_MAX_LIMIT = 500;

/** Entries per audit listing: 50 unless asked, at most 500. */
export function auditLimit(limit: number): number {
  return limit <= 0 ? AUDIT_DEFAULT_LIMIT : Math.min(AUDIT_MAX_LIMIT, limit);
}
