import type { Queryable, Row } from "@platform/kit/db";
import type { HostIdentity, HostRecord, TimeRange, WorkingHours } from "../domain/model.js";
import { hostColumns, insertSql, toHost } from "./rows.js";

/** A user as identity's events describe it, at identity's `version` of it. */
export interface IdentityUser extends HostIdentity {
  version: number;
}

/** The hosts projection (identity's users with scheduling's zone and hours) and their busy time. */
export interface HostStore {
  /**
   * Applies identity's view of a user to the hosts projection: a new host gets `timeZone` and
   * `workingHours`; a known one takes identity's names and address only (its zone and hours are
   * scheduling's, set by the sandbox or later by the host) and only from a newer version.
   * Returns whether a row changed.
   */
  applyIdentityUser(
    u: IdentityUser,
    defaults: { timeZone: string; workingHours: readonly WorkingHours[] },
  ): Promise<boolean>;
  /** A host as the projection holds it, with the identity version it last applied; undefined when unknown. */
  findHost(userId: string): Promise<(HostRecord & { identityVersion: number }) | undefined>;
  insertHost(host: HostRecord): Promise<void>;
  /** Busy time of each host overlapping `range`: its non-canceled meetings and its busy blocks, in one query. */
  busyTimes(userIds: readonly string[], range: TimeRange): Promise<Map<string, TimeRange[]>>;
  /** The host's external busy blocks overlapping `range`. */
  busyBlocks(userId: string, range: TimeRange): Promise<TimeRange[]>;
  insertBusyBlock(block: { id: string; userId: string } & TimeRange): Promise<void>;
}

export function hostStore(q: Queryable): HostStore {
  return {
    async applyIdentityUser(u, defaults) {
      const rows = await q.query(
        `INSERT INTO scheduling.hosts
           (user_id, org_id, email, first_name, last_name, display_name, time_zone, working_hours, identity_version)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9)
         ON CONFLICT (user_id) DO UPDATE SET
           email = EXCLUDED.email, first_name = EXCLUDED.first_name, last_name = EXCLUDED.last_name,
           display_name = EXCLUDED.display_name, identity_version = EXCLUDED.identity_version
         WHERE scheduling.hosts.identity_version < EXCLUDED.identity_version
           AND scheduling.hosts.org_id = EXCLUDED.org_id
         RETURNING user_id`,
        [
          u.userId,
          u.orgId,
          u.email,
          u.firstName,
          u.lastName,
          u.displayName,
          defaults.timeZone,
          JSON.stringify(defaults.workingHours),
          u.version,
        ],
      );
      return rows.length > 0;
    },
    async findHost(userId) {
      const [row] = await q.query<Row>("SELECT * FROM scheduling.hosts WHERE user_id = $1", [userId]);
      return row && { ...toHost(row), identityVersion: Number(row.identity_version) };
    },
    async insertHost(h) {
      const { sql, values } = insertSql("scheduling.hosts", hostColumns(h));
      await q.query(sql, values);
    },
    async busyTimes(userIds, range) {
      const rows = await q.query<{ user_id: string; start_time: Date; end_time: Date }>(
        `SELECT host_user_id AS user_id, start_time, end_time FROM scheduling.meetings
          WHERE host_user_id = ANY($1::text[]) AND canceled_at IS NULL
            AND tstzrange(start_time, end_time) && tstzrange($2, $3)
         UNION ALL
         SELECT user_id, start_time, end_time FROM scheduling.busy_blocks
          WHERE user_id = ANY($1::text[]) AND tstzrange(start_time, end_time) && tstzrange($2, $3)`,
        [userIds, range.start, range.end],
      );
      const busy = new Map<string, TimeRange[]>(userIds.map((id) => [id, []]));
      for (const r of rows) busy.get(r.user_id)?.push({ start: r.start_time, end: r.end_time });
      return busy;
    },
    async busyBlocks(userId, range) {
      const rows = await q.query<{ start_time: Date; end_time: Date }>(
        `SELECT start_time, end_time FROM scheduling.busy_blocks
          WHERE user_id = $1 AND tstzrange(start_time, end_time) && tstzrange($2, $3)`,
        [userId, range.start, range.end],
      );
      return rows.map((r) => ({ start: r.start_time, end: r.end_time }));
    },
    async insertBusyBlock(b) {
      await q.query("INSERT INTO scheduling.busy_blocks (id, user_id, start_time, end_time) VALUES ($1, $2, $3, $4)", [
        b.id,
        b.userId,
        b.start,
        b.end,
      ]);
    },
  };
}
