import type { Queryable } from "@platform/kit/db";
import { type Keyed, keyset, type PageQuery, params, type SortKey } from "@platform/kit/keyset";
import type { MeetingRecord } from "../domain/model.js";
import { oneRow, toMeeting } from "./rows.js";

/** The sort key of GET /deals/{id}/meetings. */
export const MEETING_SORT_KEYS: Record<string, SortKey> = {
  startTime: { expr: "m.start_time", type: "timestamptz", nullable: false },
};

/** revenue's projection of scheduling's meetings (previews included), which deals link to by attendee. */
export interface MeetingStore {
  findMeeting(orgId: string, id: string): Promise<MeetingRecord | undefined>;
  /** Writes the meeting as the event describes it, unless a later event already did. */
  upsertMeeting(m: MeetingRecord, eventTime: Date): Promise<void>;
  /** Marks the meeting canceled whatever the order its events arrive in. */
  cancelMeeting(m: MeetingRecord, eventTime: Date): Promise<void>;
  /** One keyset page of the org's non-preview meetings that any of `emails` attends. */
  listMeetingsOf(
    orgId: string,
    emails: readonly string[],
    since: Date | undefined,
    page: PageQuery,
  ): Promise<Keyed<MeetingRecord>[]>;
}

export function meetingStore(q: Queryable): MeetingStore {
  return {
    findMeeting: (orgId, id) =>
      oneRow(q, "SELECT * FROM revenue.meetings WHERE org_id = $1 AND id = $2", [orgId, id], toMeeting),
    async upsertMeeting(m, eventTime) {
      await q.query(
        `INSERT INTO revenue.meetings (id, org_id, title, start_time, end_time, canceled, preview, attendee_emails,
           event_time)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text[], $9)
         ON CONFLICT (id) DO UPDATE SET title = EXCLUDED.title, start_time = EXCLUDED.start_time,
           end_time = EXCLUDED.end_time, canceled = revenue.meetings.canceled OR EXCLUDED.canceled,
           preview = EXCLUDED.preview, attendee_emails = EXCLUDED.attendee_emails, event_time = EXCLUDED.event_time
         WHERE revenue.meetings.event_time <= EXCLUDED.event_time`,
        [m.id, m.orgId, m.title, m.start, m.end, m.canceled, m.preview, m.attendeeEmails, eventTime],
      );
    },
    async cancelMeeting(m, eventTime) {
      await q.query(
        `INSERT INTO revenue.meetings (id, org_id, title, start_time, end_time, canceled, preview, attendee_emails,
           event_time)
         VALUES ($1, $2, $3, $4, $5, true, $6, $7::text[], $8)
         ON CONFLICT (id) DO UPDATE SET canceled = true`,
        [m.id, m.orgId, m.title, m.start, m.end, m.preview, m.attendeeEmails, eventTime],
      );
    },
    async listMeetingsOf(orgId, emails, since, page) {
      const p = params();
      // Preview bookings are test runs: like CRM sync, the deal links leave them out.
      const where = [`m.org_id = ${p.add(orgId)}`, `m.attendee_emails && ${p.add(emails)}::text[]`, "NOT m.preview"];
      if (since) where.push(`m.start_time >= ${p.add(since)}`);
      const ks = keyset(page.sort.key, "m.id", page.sort.descending, page.after, p);
      const rows = await q.query(
        `SELECT m.* FROM revenue.meetings m WHERE ${where.join(" AND ")} AND ${ks.where}
         ORDER BY ${ks.orderBy} LIMIT ${p.add(page.limit)}`,
        p.values,
      );
      return rows.map((r) => {
        const m = toMeeting(r);
        return { item: m, position: [m.start.toISOString(), m.id] };
      });
    },
  };
}
