import type { Queryable } from "@platform/kit/db";
import { type Keyed, keysetRows, type PageQuery, params, type SortKey } from "@platform/kit/keyset";
import type { AccountRecord, AccountView, ContactRecord, ContactView } from "../domain/model.js";
import { toAccount, toContact } from "./rows.js";

// Accounts and contacts: the CRM sync's upserts and the API's reads. Parents and accounts
// are resolved by CRM id when read, so the order in which records sync never matters.

export const ACCOUNT_SORT_KEYS: Record<string, SortKey> = {
  updatedAt: { expr: "a.updated_at", type: "timestamptz", nullable: false },
  createdAt: { expr: "a.created_at", type: "timestamptz", nullable: false },
  name: { expr: "lower(a.name)", type: "text", nullable: false },
  employeeCount: { expr: "a.employee_count", type: "int", nullable: true },
};

export const CONTACT_SORT_KEYS: Record<string, SortKey> = {
  updatedAt: { expr: "c.updated_at", type: "timestamptz", nullable: false },
  createdAt: { expr: "c.created_at", type: "timestamptz", nullable: false },
  lastName: { expr: "lower(c.last_name)", type: "text", nullable: false },
  firstName: { expr: "lower(c.first_name)", type: "text", nullable: false },
};

// An account with its parent, a contact with its account, both resolved by CRM id: every read
// (one record, a lookup, a keyset page) selects them this way.
const ACCOUNT_SOURCE = {
  columns: "a.*, p.id AS parent_id, p.name AS parent_account_name",
  from: `crm.accounts a
  LEFT JOIN crm.accounts p ON p.org_id = a.org_id AND p.crm_id = a.parent_crm_id`,
};
const ACCOUNT_SELECT = `SELECT ${ACCOUNT_SOURCE.columns} FROM ${ACCOUNT_SOURCE.from}`;

const CONTACT_SOURCE = {
  columns: "c.*, ca.id AS account_id, ca.name AS account_name",
  from: `crm.contacts c
  LEFT JOIN crm.accounts ca ON ca.org_id = c.org_id AND ca.crm_id = c.account_crm_id`,
};
const CONTACT_SELECT = `SELECT ${CONTACT_SOURCE.columns} FROM ${CONTACT_SOURCE.from}`;

export interface AccountFilter extends PageQuery {
  name: string;
  domain: string;
  industry: string;
}

export interface ContactFilter extends PageQuery {
  search: string;
  email: string;
  /** acct_ id; empty for any. */
  accountId: string;
}

/** What an upsert writes; timestamps are the store's. */
export type AccountInput = Omit<AccountRecord, "createdAt" | "updatedAt">;
export type ContactInput = Omit<ContactRecord, "createdAt" | "updatedAt">;

export interface Upserted {
  id: string;
  created: boolean;
  /** Created, or a synced field differs: the change other contexts hear about. */
  changed: boolean;
}

// The columns the sync owns, compared to tell a real change (which bumps updated_at) from a repeat.
const ACCOUNT_COLUMNS = [
  "crm_url",
  "name",
  "root_domain",
  "fully_qualified_domain",
  "primary_industry",
  "industries",
  "employee_count",
  "primary_location",
  "profile_icon_uri",
  "valuation",
  "funding",
  "parent_crm_id",
  "parent_name",
  "summary",
] as const;

const CONTACT_COLUMNS = [
  "crm_url",
  "first_name",
  "last_name",
  "email",
  "phone",
  "title",
  "account_crm_id",
  "profile_icon_uri",
  "linked_in_url",
  "summary",
] as const;

function upsertSql(table: string, columns: readonly string[]): string {
  const all = ["id", "org_id", "crm_id", ...columns, "created_at", "updated_at"];
  const set = columns.map((c) => `${c} = EXCLUDED.${c}`).join(", ");
  const changed = `(${columns.map((c) => `t.${c}`).join(", ")}) IS DISTINCT FROM (${columns.map((c) => `EXCLUDED.${c}`).join(", ")})`;
  // The no-op update of an unchanged row still returns it, so the caller learns its id; a row
  // whose updated_at is this call's time was created or changed by it.
  return `INSERT INTO ${table} AS t (${all.join(", ")})
    VALUES (${all.map((_, i) => `$${i + 1}`).join(", ")})
    ON CONFLICT (org_id, crm_id) DO UPDATE SET ${set},
      updated_at = CASE WHEN ${changed} THEN EXCLUDED.updated_at ELSE t.updated_at END
    RETURNING id, (xmax = 0) AS created, (t.updated_at = $${all.length}) AS changed`;
}

const ACCOUNT_UPSERT = upsertSql("crm.accounts", ACCOUNT_COLUMNS);
const CONTACT_UPSERT = upsertSql("crm.contacts", CONTACT_COLUMNS);

/** Accounts and contacts as the CRM sync keeps them, each resolved against the others when read. */
export interface RecordsStore {
  upsertAccount(a: AccountInput, now: Date): Promise<Upserted>;
  upsertContact(c: ContactInput, now: Date): Promise<Upserted>;
  findAccount(orgId: string, id: string): Promise<AccountView | undefined>;
  listAccounts(orgId: string, f: AccountFilter): Promise<Keyed<AccountView>[]>;
  findContact(orgId: string, id: string): Promise<ContactView | undefined>;
  listContacts(orgId: string, f: ContactFilter): Promise<Keyed<ContactView>[]>;
  lookupAccounts(orgId: string, ids: readonly string[]): Promise<AccountView[]>;
  lookupContacts(orgId: string, ids: readonly string[]): Promise<ContactView[]>;
  accountContactEmails(orgId: string, accountId: string): Promise<string[]>;
  lookupContactsByEmail(orgId: string, emails: readonly string[]): Promise<ContactView[]>;
}

export function recordsStore(q: Queryable): RecordsStore {
  return {
    async upsertAccount(a: AccountInput, now: Date): Promise<Upserted> {
      const [row] = await q.query<{ id: string; created: boolean; changed: boolean }>(ACCOUNT_UPSERT, [
        a.id,
        a.orgId,
        a.crmId,
        a.crmUrl,
        a.name,
        a.rootDomain,
        a.fullyQualifiedDomain,
        a.primaryIndustry,
        a.industries,
        a.employeeCount,
        a.primaryLocation,
        a.profileIconUri,
        a.valuation === null ? null : JSON.stringify(a.valuation),
        a.funding === null ? null : JSON.stringify(a.funding),
        a.parentCrmId,
        a.parentName,
        a.summary,
        now,
        now,
      ]);
      if (!row) throw new Error("account upsert returned no row");
      return { id: row.id, created: row.created, changed: row.changed };
    },

    async upsertContact(c: ContactInput, now: Date): Promise<Upserted> {
      const [row] = await q.query<{ id: string; created: boolean; changed: boolean }>(CONTACT_UPSERT, [
        c.id,
        c.orgId,
        c.crmId,
        c.crmUrl,
        c.firstName,
        c.lastName,
        c.email,
        c.phone,
        c.title,
        c.accountCrmId,
        c.profileIconUri,
        c.linkedInUrl,
        c.summary,
        now,
        now,
      ]);
      if (!row) throw new Error("contact upsert returned no row");
      return { id: row.id, created: row.created, changed: row.changed };
    },

    async findAccount(orgId: string, id: string): Promise<AccountView | undefined> {
      const [row] = await q.query(`${ACCOUNT_SELECT} WHERE a.org_id = $1 AND a.id = $2`, [orgId, id]);
      return row && toAccount(row);
    },

    async listAccounts(orgId: string, f: AccountFilter): Promise<Keyed<AccountView>[]> {
      const p = params();
      const where = [`a.org_id = ${p.add(orgId)}`];
      // strpos, not LIKE: a search for "%" or "_" means those characters.
      if (f.name !== "") where.push(`strpos(lower(a.name), ${p.add(f.name.toLowerCase())}) > 0`);
      if (f.domain !== "") where.push(`a.root_domain = ${p.add(f.domain)}`);
      if (f.industry !== "") where.push(`a.primary_industry = ${p.add(f.industry)}`);
      return keysetRows(q, { ...ACCOUNT_SOURCE, where, idExpr: "a.id" }, f, p, toAccount);
    },

    async findContact(orgId: string, id: string): Promise<ContactView | undefined> {
      const [row] = await q.query(`${CONTACT_SELECT} WHERE c.org_id = $1 AND c.id = $2`, [orgId, id]);
      return row && toContact(row);
    },

    async listContacts(orgId: string, f: ContactFilter): Promise<Keyed<ContactView>[]> {
      const p = params();
      const where = [`c.org_id = ${p.add(orgId)}`];
      if (f.search !== "") {
        const s = p.add(f.search.toLowerCase());
        where.push(`(strpos(lower(c.first_name), ${s}) > 0 OR strpos(lower(c.last_name), ${s}) > 0
          OR strpos(c.email, ${s}) > 0)`);
      }
      if (f.email !== "") where.push(`c.email = ${p.add(f.email.toLowerCase())}`);
      if (f.accountId !== "") where.push(`ca.id = ${p.add(f.accountId)}`);
      return keysetRows(q, { ...CONTACT_SOURCE, where, idExpr: "c.id" }, f, p, toContact);
    },

    async lookupAccounts(orgId: string, ids: readonly string[]): Promise<AccountView[]> {
      const rows = await q.query(`${ACCOUNT_SELECT} WHERE a.org_id = $1 AND a.id = ANY($2::text[])`, [orgId, ids]);
      return rows.map(toAccount);
    },

    async lookupContacts(orgId: string, ids: readonly string[]): Promise<ContactView[]> {
      const rows = await q.query(`${CONTACT_SELECT} WHERE c.org_id = $1 AND c.id = ANY($2::text[])`, [orgId, ids]);
      return rows.map(toContact);
    },

    async accountContactEmails(orgId: string, accountId: string): Promise<string[]> {
      const rows = await q.query<{ email: string }>(
        `SELECT c.email FROM crm.contacts c
           JOIN crm.accounts ca ON ca.org_id = c.org_id AND ca.crm_id = c.account_crm_id
          WHERE c.org_id = $1 AND ca.id = $2 ORDER BY c.email LIMIT 10000`,
        [orgId, accountId],
      );
      return rows.map((r) => r.email);
    },

    async lookupContactsByEmail(orgId: string, emails: readonly string[]): Promise<ContactView[]> {
      const rows = await q.query(`${CONTACT_SELECT} WHERE c.org_id = $1 AND c.email = ANY($2::text[])`, [
        orgId,
        emails.map((e) => e.trim().toLowerCase()),
      ]);
      return rows.map(toContact);
    },
  };
}
