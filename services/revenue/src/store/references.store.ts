import type { Queryable } from "@platform/kit/db";
import type { AccountRef, ContactRef, UserRef } from "../domain/model.js";

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
  return {
    async findAccount(orgId, id) {
      const [row] = await q.query<{ id: string; name: string }>(
        "SELECT id, name FROM revenue.account_refs WHERE id = $1 AND org_id = $2",
        [id, orgId],
      );
      return row && { id: row.id, name: row.name };
    },
    async putAccount(orgId, a, seenAt) {
      await q.query(
        `INSERT INTO revenue.account_refs AS t (id, org_id, name, seen_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (id) DO UPDATE SET org_id = EXCLUDED.org_id, name = EXCLUDED.name, seen_at = EXCLUDED.seen_at
         WHERE t.seen_at <= EXCLUDED.seen_at`,
        [a.id, orgId, a.name, seenAt],
      );
    },
    async fillAccount(orgId, a, seenAt) {
      await q.query(
        `INSERT INTO revenue.account_refs (id, org_id, name, seen_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (id) DO NOTHING`,
        [a.id, orgId, a.name, seenAt],
      );
    },

    async findContact(orgId, id) {
      const [row] = await q.query<{ id: string; account_id: string; display_name: string; email: string }>(
        "SELECT id, account_id, display_name, email FROM revenue.contact_refs WHERE id = $1 AND org_id = $2",
        [id, orgId],
      );
      return row && { id: row.id, accountId: row.account_id, displayName: row.display_name, email: row.email };
    },
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
    async fillContact(orgId, c, seenAt) {
      await q.query(
        `INSERT INTO revenue.contact_refs (id, org_id, account_id, display_name, email, seen_at)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING`,
        [c.id, orgId, c.accountId, c.displayName, c.email, seenAt],
      );
    },

    async findUser(orgId, id) {
      const [row] = await q.query<{ id: string; display_name: string }>(
        "SELECT id, display_name FROM revenue.user_refs WHERE id = $1 AND org_id = $2",
        [id, orgId],
      );
      return row && { userId: row.id, displayName: row.display_name };
    },
    async fillUser(orgId, u, seenAt) {
      await q.query(
        `INSERT INTO revenue.user_refs (id, org_id, display_name, seen_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (id) DO NOTHING`,
        [u.userId, orgId, u.displayName, seenAt],
      );
    },

    async findAdministrator(orgId) {
      const [row] = await q.query<{ administrator_user_id: string; administrator_display_name: string }>(
        "SELECT administrator_user_id, administrator_display_name FROM revenue.org_refs WHERE org_id = $1",
        [orgId],
      );
      return row && { userId: row.administrator_user_id, displayName: row.administrator_display_name };
    },
    async fillAdministrator(orgId, u, seenAt) {
      await q.query(
        `INSERT INTO revenue.org_refs (org_id, administrator_user_id, administrator_display_name, seen_at)
         VALUES ($1, $2, $3, $4) ON CONFLICT (org_id) DO NOTHING`,
        [orgId, u.userId, u.displayName, seenAt],
      );
    },

    async forgetUser(userId) {
      await q.query("DELETE FROM revenue.user_refs WHERE id = $1", [userId]);
      await q.query("DELETE FROM revenue.org_refs WHERE administrator_user_id = $1", [userId]);
    },
    async forgetOrganization(orgId) {
      await q.query("DELETE FROM revenue.org_refs WHERE org_id = $1", [orgId]);
    },
  };
}
