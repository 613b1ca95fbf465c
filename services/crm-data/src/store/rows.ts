import type { Row } from "@platform/kit/db";
import type { AccountView, ContactView, Funding, Valuation } from "../domain/model.js";

// Rows to records. Dates come back as Date from pg and PGlite alike.

const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const date = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));

export function toAccount(r: Row): AccountView {
  return {
    id: String(r.id),
    orgId: String(r.org_id),
    crmId: String(r.crm_id),
    crmUrl: String(r.crm_url),
    name: String(r.name),
    rootDomain: str(r.root_domain),
    fullyQualifiedDomain: str(r.fully_qualified_domain),
    primaryIndustry: str(r.primary_industry),
    industries: (r.industries as string[] | null) ?? [],
    employeeCount: r.employee_count === null ? null : Number(r.employee_count),
    primaryLocation: str(r.primary_location),
    profileIconUri: str(r.profile_icon_uri),
    valuation: (r.valuation as Valuation | null) ?? null,
    funding: (r.funding as Funding | null) ?? null,
    parentCrmId: str(r.parent_crm_id),
    parentName: str(r.parent_name),
    summary: str(r.summary),
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
    parent: r.parent_id ? { id: String(r.parent_id), name: String(r.parent_account_name) } : null,
  };
}

export function toContact(r: Row): ContactView {
  return {
    id: String(r.id),
    orgId: String(r.org_id),
    crmId: String(r.crm_id),
    crmUrl: String(r.crm_url),
    firstName: String(r.first_name),
    lastName: String(r.last_name),
    email: String(r.email),
    phone: str(r.phone),
    title: str(r.title),
    accountCrmId: str(r.account_crm_id),
    profileIconUri: str(r.profile_icon_uri),
    linkedInUrl: str(r.linked_in_url),
    summary: str(r.summary),
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
    account: r.account_id ? { id: String(r.account_id), name: String(r.account_name) } : null,
  };
}

export { date as toDate, str as toNullableString };
