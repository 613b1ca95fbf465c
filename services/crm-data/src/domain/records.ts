import { isCalendarDate } from "@platform/kit/dates";
import { problem } from "@platform/kit/problems";
import type { AccountRecord, ContactRecord } from "./model.js";

// The rules of accounts and contacts and of the CRM sync's input.

export const displayName = (c: Pick<ContactRecord, "firstName" | "lastName">): string =>
  [c.firstName, c.lastName].filter((p) => p.trim() !== "").join(" ");

/**
 * The parent company an account shows: the tracked account when the CRM's parent id
 * resolves, else the raw name with a null id; null when the CRM names no parent.
 */
export function parentCompany(
  a: Pick<AccountRecord, "parentCrmId" | "parentName">,
  tracked: { id: string; name: string } | null,
): { id: string | null; name: string } | null {
  if (tracked) return tracked;
  if (a.parentName) return { id: null, name: a.parentName };
  return null;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const invalid = (field: string, why: string) => problem("invalid-field", why, { field });

export function checkEmail(raw: string, field = "email"): string {
  const email = raw.trim().toLowerCase();
  if (!EMAIL.test(email)) throw problem("invalid-email", `${field} '${raw}' is not a valid email address.`, { field });
  return email;
}

export function checkEmployeeCount(n: number | undefined): number | null {
  if (n === undefined) return null;
  if (!Number.isInteger(n) || n < 1 || n > 1_000_000)
    throw invalid("employeeCount", "employeeCount must be 1 to 1,000,000.");
  return n;
}

export function checkDate(raw: string, field: string): string {
  if (!isCalendarDate(raw)) {
    throw invalid(field, `${field} must be a date (YYYY-MM-DD).`);
  }
  return raw;
}

export function checkRequired(raw: string, field: string): string {
  const value = raw.trim();
  if (value === "") throw invalid(field, `${field} is required.`);
  return value;
}

/** A domain as the filter compares it: lower case, without a trailing dot. */
export const normalDomain = (raw: string): string => raw.trim().toLowerCase().replace(/\.$/, "");
