import type { Queryable } from "@platform/kit/db";
import { type Keyed, keyset, type PageQuery, params, positionValue, type SortKey } from "@platform/kit/keyset";
import type { HostRecord, ScheduleRecord, ScheduleStatus } from "../domain/model.js";
import { insertSql, scheduleColumns, toHost, toSchedule } from "./rows.js";

/** The sort keys of GET /smart-schedules; names sort case-insensitively. */
export const SCHEDULE_SORT_KEYS: Record<string, SortKey> = {
  updatedAt: { expr: "s.updated_at", type: "timestamptz", nullable: false },
  createdAt: { expr: "s.created_at", type: "timestamptz", nullable: false },
  name: { expr: "lower(s.name)", type: "text", nullable: false },
};

export interface ScheduleQuery extends PageQuery {
  /** Statuses to list (never draft). */
  statuses: readonly ScheduleStatus[];
  /** Case-insensitive substring of the name; empty for any. */
  name: string;
}

/** The smart schedules and the hosts assigned to them. */
export interface ScheduleStore {
  /** The schedule of `orgId` with that id, drafts included; another org's is as absent as an unknown one. */
  findSchedule(orgId: string, id: string): Promise<ScheduleRecord | undefined>;
  listSchedules(orgId: string, query: ScheduleQuery): Promise<Keyed<ScheduleRecord>[]>;
  /** The schedule's hosts by display name. */
  listAssignees(scheduleId: string): Promise<HostRecord[]>;
  insertSchedule(schedule: ScheduleRecord, hostUserIds: readonly string[]): Promise<void>;
}

export function scheduleStore(q: Queryable): ScheduleStore {
  return {
    async findSchedule(orgId, id) {
      const [row] = await q.query("SELECT * FROM scheduling.schedules WHERE org_id = $1 AND id = $2", [orgId, id]);
      return row && toSchedule(row);
    },
    async listSchedules(orgId, { statuses, name, sort, after, limit }) {
      const p = params();
      const where = [`s.org_id = ${p.add(orgId)}`, `s.status = ANY(${p.add(statuses)}::text[])`];
      // strpos, not LIKE: a search for "%" or "_" means those characters.
      if (name !== "") where.push(`strpos(lower(s.name), ${p.add(name.toLowerCase())}) > 0`);
      const page = keyset(sort.key, "s.id", sort.descending, after, p);
      const rows = await q.query(
        `SELECT s.*, ${sort.key.expr} AS sort_value FROM scheduling.schedules s
          WHERE ${[...where, page.where].join(" AND ")}
          ORDER BY ${page.orderBy}
          LIMIT ${p.add(limit)}`,
        p.values,
      );
      return rows.map((r) => ({ item: toSchedule(r), position: [positionValue(r.sort_value), String(r.id)] }));
    },
    async listAssignees(scheduleId) {
      const rows = await q.query(
        `SELECT h.* FROM scheduling.schedule_hosts sh JOIN scheduling.hosts h ON h.user_id = sh.user_id
          WHERE sh.schedule_id = $1 ORDER BY h.display_name, h.user_id`,
        [scheduleId],
      );
      return rows.map(toHost);
    },
    async insertSchedule(s, hostUserIds) {
      const { sql, values } = insertSql("scheduling.schedules", scheduleColumns(s));
      await q.query(sql, values);
      if (hostUserIds.length === 0) return;
      await q.query(
        `INSERT INTO scheduling.schedule_hosts (schedule_id, org_id, user_id)
         SELECT $1, $2, unnest($3::text[])`,
        [s.id, s.orgId, hostUserIds],
      );
    },
  };
}
