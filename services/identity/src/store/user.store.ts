import type { Queryable } from "@platform/kit/db";
import type { Keyed, PageQuery, Params, SortKey } from "@platform/kit/keyset";
import { keyset, params, positionValue } from "@platform/kit/keyset";
import type { UserFilters } from "../domain/listing.js";
import type { UserRecord } from "../domain/model.js";
import { toUser } from "./rows.js";

/** A user with the display name of whoever invited them (a user's current name, else the stored one). */
export type UserView = UserRecord & { invitedByDisplayName: string | null };

/** The sort keys of GET /users; names sort case-insensitively. */
export const USER_SORT_KEYS: Record<string, SortKey> = {
  updatedAt: { expr: "u.updated_at", type: "timestamptz", nullable: false },
  createdAt: { expr: "u.created_at", type: "timestamptz", nullable: false },
  lastLoginAt: { expr: "u.last_login_at", type: "timestamptz", nullable: true },
  email: { expr: "u.email", type: "text", nullable: false },
  firstName: { expr: "lower(u.first_name)", type: "text", nullable: true },
  lastName: { expr: "lower(u.last_name)", type: "text", nullable: true },
};

export interface UserQuery extends PageQuery {
  filters: UserFilters;
}

/** The users of each organization. */
export interface UserStore {
  /** The user of `orgId` with that id; another org's user is as absent as an unknown one. */
  findUser(orgId: string, id: string): Promise<UserView | undefined>;
  listUsers(orgId: string, query: UserQuery): Promise<Keyed<UserView>[]>;
  /** The active user holding `email` in the org (at most one, by a unique index), whatever the invitation's state. */
  findActiveUserByEmail(orgId: string, email: string): Promise<UserRecord | undefined>;
  /** Active users whose invitation is accepted or was sent at or after `pendingSince`. */
  countSeatHolders(orgId: string, pendingSince: Date): Promise<number>;
  /** Active, accepted Admins and Partner Admins other than `exceptUserId`. */
  countOtherAdministrators(orgId: string, exceptUserId: string): Promise<number>;
  insertUser(user: UserRecord): Promise<void>;
  /** Writes every mutable column of the user (all but id, org, email and creation time). */
  updateUser(user: UserRecord): Promise<void>;
}

const USER_COLUMNS = "u.*, COALESCE(inviter.display_name, u.invited_by_name) AS invited_by_display_name";
const USERS = "identity.users u LEFT JOIN identity.users inviter ON inviter.id = u.invited_by_user_id";

function toUserView(r: Record<string, unknown>): UserView {
  const by = r.invited_by_display_name;
  return { ...toUser(r), invitedByDisplayName: by === null || by === undefined ? null : String(by) };
}

/**
 * Holds a seat (`holdsSeat` of the domain, in SQL): active, and the invitation accepted or
 * sent at or after `pendingSince` (a placeholder).
 */
export function holdsSeatSql(alias: string, pendingSince: string): string {
  return `${alias}.active AND (${alias}.invitation_status = 'accepted' OR ${alias}.invited_at >= ${pendingSince})`;
}

function filterSql(f: UserFilters, p: Params): string[] {
  const where: string[] = [];
  if (f.search !== "") {
    const s = p.add(f.search.toLowerCase());
    // strpos, not LIKE: a search for "%" or "_" means those characters.
    where.push(
      `(strpos(u.email, ${s}) > 0 OR strpos(lower(u.first_name), ${s}) > 0
        OR strpos(lower(u.last_name), ${s}) > 0 OR strpos(lower(u.display_name), ${s}) > 0)`,
    );
  }
  if (f.role !== undefined) where.push(`u.role = ${p.add(f.role)}`);
  if (f.active !== undefined) where.push(`u.active = ${p.add(f.active)}`);
  if (f.since !== undefined) where.push(`u.updated_at >= ${p.add(f.since)}`);
  return where;
}

export function userStore(q: Queryable): UserStore {
  return {
    async findUser(orgId, id) {
      const [row] = await q.query(`SELECT ${USER_COLUMNS} FROM ${USERS} WHERE u.org_id = $1 AND u.id = $2`, [
        orgId,
        id,
      ]);
      return row && toUserView(row);
    },
    async listUsers(orgId, { filters, sort, after, limit }) {
      const p = params();
      const where = [`u.org_id = ${p.add(orgId)}`, ...filterSql(filters, p)];
      const page = keyset(sort.key, "u.id", sort.descending, after, p);
      const found = await q.query(
        `SELECT ${USER_COLUMNS}, ${sort.key.expr} AS sort_value FROM ${USERS}
          WHERE ${[...where, page.where].join(" AND ")}
          ORDER BY ${page.orderBy}
          LIMIT ${p.add(limit)}`,
        p.values,
      );
      return found.map((r) => ({ item: toUserView(r), position: [positionValue(r.sort_value), String(r.id)] }));
    },
    async findActiveUserByEmail(orgId, email) {
      const [row] = await q.query("SELECT * FROM identity.users WHERE org_id = $1 AND email = $2 AND active", [
        orgId,
        email,
      ]);
      return row && toUser(row);
    },
    async countSeatHolders(orgId, pendingSince) {
      const [row] = await q.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM identity.users u WHERE u.org_id = $1 AND ${holdsSeatSql("u", "$2")}`,
        [orgId, pendingSince],
      );
      return row?.n ?? 0;
    },
    async countOtherAdministrators(orgId, exceptUserId) {
      const [row] = await q.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM identity.users
         WHERE org_id = $1 AND id <> $2 AND active AND invitation_status = 'accepted'
           AND role IN ('Admin', 'Partner Admin')`,
        [orgId, exceptUserId],
      );
      return row?.n ?? 0;
    },
    async insertUser(u) {
      const cols = userColumns(u);
      await q.query(
        `INSERT INTO identity.users (${cols.map(([c]) => c).join(", ")})
         VALUES (${cols.map((_, i) => `$${i + 1}`).join(", ")})`,
        cols.map(([, v]) => v),
      );
    },
    async updateUser(u) {
      const cols = userColumns(u).filter(([c]) => !IMMUTABLE_USER_COLUMNS.has(c));
      await q.query(
        `UPDATE identity.users SET ${cols.map(([c], i) => `${c} = $${i + 3}`).join(", ")}
         WHERE org_id = $1 AND id = $2`,
        [u.orgId, u.id, ...cols.map(([, v]) => v)],
      );
    },
  };
}

const IMMUTABLE_USER_COLUMNS = new Set(["id", "org_id", "email", "created_at"]);

/** A user record as (column, value) pairs: the one place that maps fields to columns for writes. */
function userColumns(u: UserRecord): [string, unknown][] {
  return [
    ["id", u.id],
    ["org_id", u.orgId],
    ["email", u.email],
    ["first_name", u.firstName],
    ["last_name", u.lastName],
    ["display_name", u.displayName],
    ["title", u.title],
    ["department", u.department],
    ["phone_number", u.phoneNumber],
    ["profile_image_url", u.profileImageUrl],
    ["role", u.role],
    ["active", u.active],
    ["invitation_status", u.invitationStatus],
    ["invited_at", u.invitedAt],
    ["invited_by_user_id", u.invitedByUserId],
    ["invited_by_name", u.invitedByName],
    ["last_login_at", u.lastLoginAt],
    ["two_factor_enabled", u.twoFactorEnabled],
    ["crm_user_id", u.crmUserId],
    ["version", u.version],
    ["created_at", u.createdAt],
    ["updated_at", u.updatedAt],
  ];
}
