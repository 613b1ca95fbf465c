import type { Queryable, Row } from "@platform/kit/db";
import { problem } from "@platform/kit/problems";
import type { HostRecord, MeetingAuditEntry, MeetingRecord } from "../domain/model.js";
import { insertSql, meetingColumns, toHost, toMeeting } from "./rows.js";

/** A meeting with its host as the meeting shows it. */
export interface MeetingView {
  meeting: MeetingRecord;
  host: HostRecord;
}

/** The booked meetings and their audit trail. */
export interface MeetingStore {
  findMeeting(orgId: string, id: string): Promise<MeetingView | undefined>;
  /** The meeting, row-locked until the transaction ends, so changes to one meeting run one at a time. */
  lockMeeting(orgId: string, id: string): Promise<MeetingView | undefined>;
  /** Throws 409 slot-conflict when the host already has a meeting overlapping it. */
  insertMeeting(meeting: MeetingRecord): Promise<void>;
  /** Writes every mutable column; the same slot-conflict as inserting. */
  updateMeeting(meeting: MeetingRecord): Promise<void>;
  insertAudit(entry: MeetingAuditEntry): Promise<void>;
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

const IMMUTABLE_MEETING_COLUMNS = new Set(["id", "org_id", "schedule_id", "created_at"]);

export function meetingStore(q: Queryable): MeetingStore {
  return {
    async findMeeting(orgId, id) {
      const [row] = await q.query(MEETING_WITH_HOST, [orgId, id]);
      return row && toMeetingView(row);
    },
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
  };
}
