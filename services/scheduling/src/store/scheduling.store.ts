import type { Db, Queryable, Row } from "@platform/kit/db";
import { type Keyed, keyset, type PageQuery, params, positionValue, type SortKey } from "@platform/kit/keyset";
import { enqueueEvent, type OutboxEvent } from "@platform/kit/outbox";
import { problem } from "@platform/kit/problems";
import type { TimeRange } from "../domain/types.js";
import type { HostRecord, MeetingAuditEntry, MeetingRecord, ScheduleRecord, ScheduleStatus } from "../model.js";
import { hostColumns, insertSql, meetingColumns, scheduleColumns, toHost, toMeeting, toSchedule } from "./rows.js";

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

/** A meeting with its host as the meeting shows it. */
export interface MeetingView {
  meeting: MeetingRecord;
  host: HostRecord;
}

export interface SchedulingReads {
  /** The schedule of `orgId` with that id, drafts included; another org's is as absent as an unknown one. */
  findSchedule(orgId: string, id: string): Promise<ScheduleRecord | undefined>;
  listSchedules(orgId: string, query: ScheduleQuery): Promise<Keyed<ScheduleRecord>[]>;
  /** The schedule's hosts by display name. */
  listAssignees(scheduleId: string): Promise<HostRecord[]>;
  /** Busy time of each host overlapping `range`: its non-canceled meetings and its busy blocks, in one query. */
  busyTimes(userIds: readonly string[], range: TimeRange): Promise<Map<string, TimeRange[]>>;
  /** The host's external busy blocks overlapping `range`. */
  busyBlocks(userId: string, range: TimeRange): Promise<TimeRange[]>;
  findMeeting(orgId: string, id: string): Promise<MeetingView | undefined>;
}

export interface SchedulingWrites extends SchedulingReads {
  /** The meeting, row-locked until the transaction ends, so changes to one meeting run one at a time. */
  lockMeeting(orgId: string, id: string): Promise<MeetingView | undefined>;
  /** Throws 409 slot-conflict when the host already has a meeting overlapping it. */
  insertMeeting(meeting: MeetingRecord): Promise<void>;
  /** Writes every mutable column; the same slot-conflict as inserting. */
  updateMeeting(meeting: MeetingRecord): Promise<void>;
  insertAudit(entry: MeetingAuditEntry): Promise<void>;
  insertSchedule(schedule: ScheduleRecord, hostUserIds: readonly string[]): Promise<void>;
  insertHost(host: HostRecord): Promise<void>;
  insertBusyBlock(block: { id: string; userId: string } & TimeRange): Promise<void>;
  /** Writes an outbox row in the same transaction as the change it announces. */
  enqueue(event: OutboxEvent): Promise<string>;
}

export interface SchedulingStore extends SchedulingReads {
  /** One transaction: committed when `fn` resolves, rolled back when it throws. */
  tx<T>(fn: (w: SchedulingWrites) => Promise<T>): Promise<T>;
}

const EXCLUSION_VIOLATION = "23P01";

/** The double-booking guard fired: another meeting of the host overlaps (possibly committed a moment ago). */
function slotConflictOn<T>(write: Promise<T>): Promise<T> {
  return write.catch((err: unknown) => {
    if ((err as { code?: string }).code === EXCLUSION_VIOLATION) {
      throw problem("slot-conflict", "The slot was just booked by someone else; run availability again.", {
        rerunAvailability: true,
      });
    }
    throw err;
  });
}

const MEETING_WITH_HOST = `SELECT m.*, to_jsonb(h) AS host FROM scheduling.meetings m
  JOIN scheduling.hosts h ON h.user_id = m.host_user_id WHERE m.org_id = $1 AND m.id = $2`;

const toMeetingView = (r: Row): MeetingView => ({ meeting: toMeeting(r), host: toHost(r.host as Row) });

function readsOn(q: Queryable): SchedulingReads {
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
    async findMeeting(orgId, id) {
      const [row] = await q.query(MEETING_WITH_HOST, [orgId, id]);
      return row && toMeetingView(row);
    },
  };
}

const IMMUTABLE_MEETING_COLUMNS = new Set(["id", "org_id", "schedule_id", "created_at"]);

/** The store's writes within the caller's transaction (`idempotentRpc` and `consumeOnce` open one). */
export function schedulingWrites(q: Queryable): SchedulingWrites {
  return {
    ...readsOn(q),
    async lockMeeting(orgId, id) {
      const [row] = await q.query(`${MEETING_WITH_HOST} FOR UPDATE OF m`, [orgId, id]);
      return row && toMeetingView(row);
    },
    async insertMeeting(m) {
      const { sql, values } = insertSql("scheduling.meetings", meetingColumns(m));
      await slotConflictOn(q.query(sql, values));
    },
    async updateMeeting(m) {
      const cols = meetingColumns(m).filter(([c]) => !IMMUTABLE_MEETING_COLUMNS.has(c));
      await slotConflictOn(
        q.query(
          `UPDATE scheduling.meetings
              SET ${cols.map(([c, , cast], i) => `${c} = $${i + 3}${cast ? `::${cast}` : ""}`).join(", ")}
            WHERE org_id = $1 AND id = $2`,
          [m.orgId, m.id, ...cols.map(([, v]) => v)],
        ),
      );
    },
    async insertAudit(e) {
      await q.query(
        `INSERT INTO scheduling.meeting_audit (meeting_id, at, action, reason, previous_start_time, previous_end_time,
           previous_host_user_id, new_start_time, new_end_time, new_host_user_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          e.meetingId,
          e.at,
          e.action,
          e.reason,
          e.previous?.start ?? null,
          e.previous?.end ?? null,
          e.previous?.hostUserId ?? null,
          e.next?.start ?? null,
          e.next?.end ?? null,
          e.next?.hostUserId ?? null,
        ],
      );
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
    async insertHost(h) {
      const { sql, values } = insertSql("scheduling.hosts", hostColumns(h));
      await q.query(sql, values);
    },
    async insertBusyBlock(b) {
      await q.query("INSERT INTO scheduling.busy_blocks (id, user_id, start_time, end_time) VALUES ($1, $2, $3, $4)", [
        b.id,
        b.userId,
        b.start,
        b.end,
      ]);
    },
    enqueue: (event) => enqueueEvent(q, "scheduling", event),
  };
}

/** The scheduling store on the service database (Postgres or the embedded PGlite). */
export function pgSchedulingStore(db: Db): SchedulingStore {
  return { ...readsOn(db), tx: (fn) => db.tx((q) => fn(schedulingWrites(q))) };
}
