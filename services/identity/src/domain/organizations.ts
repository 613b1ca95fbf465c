import { problem } from "@platform/kit/problems";
import { optionalText, requiredText } from "./fields.js";
import type { OrganizationRecord } from "./model.js";

export const MIN_EMPLOYEES = 1;
export const MAX_EMPLOYEES = 1_000_000;

/** The writable fields of PATCH /organizations/{orgId}; absent ones stay as they are. */
export interface OrganizationPatch {
  name?: string | undefined;
  primaryEmailDomain?: string | undefined;
  industry?: string | undefined;
  employeeCount?: number | undefined;
}

/** The patch with each present value checked and normalised (400 invalid-field naming the field). */
export function validateOrganizationPatch(patch: OrganizationPatch): OrganizationPatch {
  const out: OrganizationPatch = {};
  if (patch.name !== undefined) out.name = requiredText(patch.name, "name");
  if (patch.industry !== undefined) out.industry = optionalText(patch.industry, "industry") ?? "";
  if (patch.employeeCount !== undefined) {
    const n = patch.employeeCount;
    if (!Number.isInteger(n) || n < MIN_EMPLOYEES || n > MAX_EMPLOYEES) {
      throw problem(
        "invalid-field",
        `employeeCount must be an integer from ${MIN_EMPLOYEES} to ${MAX_EMPLOYEES.toLocaleString("en-US")}.`,
        { field: "employeeCount" },
      );
    }
    out.employeeCount = n;
  }
  if (patch.primaryEmailDomain !== undefined) out.primaryEmailDomain = patch.primaryEmailDomain.trim();
  return out;
}

/** The verified domain `requested` names, compared case-insensitively, in its verified spelling. */
export function verifiedDomain(requested: string, emailDomains: readonly string[]): string {
  const match = emailDomains.find((d) => d.toLowerCase() === requested.toLowerCase());
  if (!match) {
    throw problem(
      "email-domain-not-verified",
      `'${requested}' is not a verified domain of the organization; verified: ${emailDomains.join(", ")}.`,
    );
  }
  return match;
}

/**
 * The organization after a validated patch at `now`: a new version even when no value
 * differs (a PATCH is a mutation), with the API names of the fields whose value changed.
 */
export function applyOrganizationPatch(
  org: OrganizationRecord,
  patch: OrganizationPatch,
  now: Date,
): { next: OrganizationRecord; changedFields: string[] } {
  const next: OrganizationRecord = {
    ...org,
    name: patch.name ?? org.name,
    primaryEmailDomain:
      patch.primaryEmailDomain === undefined
        ? org.primaryEmailDomain
        : verifiedDomain(patch.primaryEmailDomain, org.emailDomains),
    industry: patch.industry ?? org.industry,
    employeeCount: patch.employeeCount ?? org.employeeCount,
    version: org.version + 1,
    updatedAt: now,
  };
  const fields = ["name", "primaryEmailDomain", "industry", "employeeCount"] as const;
  return { next, changedFields: fields.filter((f) => next[f] !== org[f]) };
}
