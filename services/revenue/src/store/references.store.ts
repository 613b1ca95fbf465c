import type { Queryable } from "@platform/kit/db";
import type { AccountRef, ContactRef, UserRef } from "../domain/model.js";
import { insertSql, oneRow } from "./rows.js";

// revenue's projections of the accounts, contacts, users and organization administrators that
// deals and Q&As reference (migration 003). Events write the newest view (by the time the
// owner described it); a read-through only fills an id that no event has described yet.

export type { AccountRef, UserRef } from "../domain/model.js";

/** The projections of what deals and Q&As reference in crm-data and identity. */
export interface ReferenceStore {
  findAccount(orgId: string, id: string): Promise<AccountRef | undefined>;
  /** From an event: kept unless a newer description is already there. */
  putAccount(orgId: string, a: AccountRef, seenAt: Date): Promise<void>;
  /** From a read-through: fills a gap, never overwrites what an event wrote. */
  fillAccount(orgId: string, a: AccountRef, seenAt: Date): Promise<void>;
  findContact(orgId: string, id: string): Promise<ContactRef | undefined>;
  putContact(orgId: string, c: ContactRef, seenAt: Date): Promise<void>;
  fillContact(orgId: string, c: ContactRef, seenAt: Date): Promise<void>;
  findUser(orgId: string, id: string): Promise<UserRef | undefined>;
  fillUser(orgId: string, u: UserRef, seenAt: Date): Promise<void>;
  /** The org's administrator, the default owner of a new deal. */
  findAdministrator(orgId: string): Promise<UserRef | undefined>;
  fillAdministrator(orgId: string, u: UserRef, seenAt: Date): Promise<void>;
  /**
   * identity's events say that a user changed but not their new name: what revenue holds of
   * them is dropped, and the next write that names them reads through.
   */
  forgetUser(userId: string): Promise<void>;
  forgetOrganization(orgId: string): Promise<void>;
}

export function referenceStore(q: Queryable): ReferenceStore {
  /** A read-through's row: inserted unless an event (or an earlier read) already put one. */
  const fill = async (table: string, key: string, columns: Record<string, unknown>) => {
    const { sql, values } = insertSql(`revenue.${table}`, columns);
    await q.query(`${sql} ON CONFLICT (${key}) DO NOTHING`, values);
  };
  const text = (v: unknown) => v as string;

  return {
    findAccount: (orgId, id) =>
      oneRow(q, "SELECT id, name FROM revenue.account_refs WHERE id = $1 AND org_id = $2", [id, orgId], (r) => ({
        id: text(r.id),
        name: text(r.name),
      })),
    async putAccount(orgId, a, seenAt) {
      await q.query(
        `INSERT INTO revenue.account_refs AS t (id, org_id, name, seen_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (id) DO UPDATE SET org_id = EXCLUDED.org_id, name = EXCLUDED.name, seen_at = EXCLUDED.seen_at
         WHERE t.seen_at <= EXCLUDED.seen_at`,
        [a.id, orgId, a.name, seenAt],
      );
    },
    fillAccount: (orgId, a, seenAt) =>
      fill("account_refs", "id", { id: a.id, org_id: orgId, name: a.name, seen_at: seenAt }),

    findContact: (orgId, id) =>
      oneRow(
        q,
        "SELECT id, account_id, display_name, email FROM revenue.contact_refs WHERE id = $1 AND org_id = $2",
        [id, orgId],
        (r) => ({
          id: text(r.id),
          accountId: text(r.account_id),
          displayName: text(r.display_name),
          email: text(r.email),
        }),
      ),
    async putContact(orgId, c, seenAt) {
      await q.query(
        `INSERT INTO revenue.contact_refs AS t (id, org_id, account_id, display_name, email, seen_at)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (id) DO UPDATE SET org_id = EXCLUDED.org_id, account_id = EXCLUDED.account_id,
           display_name = EXCLUDED.display_name, email = EXCLUDED.email, seen_at = EXCLUDED.seen_at
         WHERE t.seen_at <= EXCLUDED.seen_at`,
        [c.id, orgId, c.accountId, c.displayName, c.email, seenAt],
      );
    },
    fillContact: (orgId, c, seenAt) =>
      fill("contact_refs", "id", {
        id: c.id,
        org_id: orgId,
        account_id: c.accountId,
        display_name: c.displayName,
        email: c.email,
        seen_at: seenAt,
      }),

    findUser: (orgId, id) =>
      oneRow(q, "SELECT id, display_name FROM revenue.user_refs WHERE id = $1 AND org_id = $2", [id, orgId], (r) => ({
        userId: text(r.id),
        displayName: text(r.display_name),
      })),
    fillUser: (orgId, u, seenAt) =>
      fill("user_refs", "id", { id: u.userId, org_id: orgId, display_name: u.displayName, seen_at: seenAt }),

    findAdministrator: (orgId) =>
      oneRow(
        q,
        "SELECT administrator_user_id, administrator_display_name FROM revenue.org_refs WHERE org_id = $1",
        [orgId],
        (r) => ({ userId: text(r.administrator_user_id), displayName: text(r.administrator_display_name) }),
      ),
    fillAdministrator: (orgId, u, seenAt) =>
      fill("org_refs", "org_id", {
        org_id: orgId,
        administrator_user_id: u.userId,
        administrator_display_name: u.displayName,
        seen_at: seenAt,
      }),

    async forgetUser(userId) {
      await q.query("DELETE FROM revenue.user_refs WHERE id = $1", [userId]);
      await q.query("DELETE FROM revenue.org_refs WHERE administrator_user_id = $1", [userId]);
    },
    async forgetOrganization(orgId) {
      await q.query("DELETE FROM revenue.org_refs WHERE org_id = $1", [orgId]);
    },
  };
}
