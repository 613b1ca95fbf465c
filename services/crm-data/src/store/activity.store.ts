import type { Queryable } from "@platform/kit/db";
import { type Keyed, keyset, type PageQuery, params, positionValue, type SortKey } from "@platform/kit/keyset";
import type { ActivityType, EmailSend, MeetingFacts } from "../domain/activity.js";
import { toDate } from "./rows.js";

// The timelines: meetings and email sends, matched to contacts by email when read.

export const ACTIVITY_SORT_KEYS: Record<string, SortKey> = {
  occurredAt: { expr: "t.occurred_at", type: "timestamptz", nullable: false },
};

export type ActivityRow =
  | { type: "meeting"; itemId: string; occurredAt: Date; meeting: { id: string; title: string; hostName: string } }
  | { type: "email"; itemId: string; occurredAt: Date; email: { subject: string; senderName: string } };

/** Whose timeline: one contact, or every contact of one account (by the account's CRM id). */
export type TimelineOf = { contactId: string } | { accountCrmId: string };

export interface ActivityQuery extends PageQuery {
  types: readonly ActivityType[];
  since: Date;
}

export interface StoredMeeting extends MeetingFacts {
  source: "scheduling" | "bot";
}

/** The activity timeline: meetings projected from scheduling and the bots, and email sends. */
export interface ActivityStore {
  /**
   * Applies a scheduling event: an event older than what is stored (by the meeting's
   * update time) changes nothing, so redelivered or reordered events are harmless.
   */
  projectMeeting(m: MeetingFacts): Promise<void>;
  /** A meeting only the recording bot knows; scheduling's description wins when both exist. */
  noteBotMeeting(m: { id: string; orgId: string; title: string; start: Date; end: Date }): Promise<void>;
  findMeeting(orgId: string, id: string): Promise<StoredMeeting | undefined>;
  /** Records a send; a repeated event id changes nothing. */
  recordEmailSend(e: EmailSend): Promise<void>;
  listActivity(orgId: string, of: TimelineOf, f: ActivityQuery): Promise<Keyed<ActivityRow>[]>;
}

export function activityStore(q: Queryable): ActivityStore {
  return {
    /**
     * Applies a scheduling event: an event older than what is stored (by the meeting's
     * update time) changes nothing, so redelivered or reordered events are harmless.
     */
    async projectMeeting(m: MeetingFacts): Promise<void> {
      await q.query(
        `INSERT INTO crm.meetings AS t (id, org_id, title, host_name, start_time, end_time, canceled, preview,
           attendee_emails, source, version_time)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'scheduling', $10)
         ON CONFLICT (id) DO UPDATE SET title = EXCLUDED.title, host_name = EXCLUDED.host_name,
           start_time = EXCLUDED.start_time, end_time = EXCLUDED.end_time, canceled = EXCLUDED.canceled,
           preview = EXCLUDED.preview, attendee_emails = EXCLUDED.attendee_emails, source = 'scheduling',
           version_time = EXCLUDED.version_time
         WHERE t.org_id = EXCLUDED.org_id AND (t.source = 'bot' OR t.version_time <= EXCLUDED.version_time)`,
        [m.id, m.orgId, m.title, m.hostName, m.start, m.end, m.canceled, m.preview, m.attendeeEmails, m.versionTime],
      );
    },

    /** A meeting only the recording bot knows; scheduling's description wins when both exist. */
    async noteBotMeeting(m: { id: string; orgId: string; title: string; start: Date; end: Date }): Promise<void> {
      await q.query(
        `INSERT INTO crm.meetings (id, org_id, title, host_name, start_time, end_time, source, version_time)
         VALUES ($1, $2, $3, '', $4, $5, 'bot', $4) ON CONFLICT (id) DO NOTHING`,
        [m.id, m.orgId, m.title, m.start, m.end],
      );
    },

    async findMeeting(orgId: string, id: string): Promise<StoredMeeting | undefined> {
      const [r] = await q.query("SELECT * FROM crm.meetings WHERE org_id = $1 AND id = $2", [orgId, id]);
      if (!r) return undefined;
      return {
        id: String(r.id),
        orgId: String(r.org_id),
        title: String(r.title),
        hostName: String(r.host_name),
        start: toDate(r.start_time),
        end: toDate(r.end_time),
        canceled: Boolean(r.canceled),
        preview: Boolean(r.preview),
        attendeeEmails: (r.attendee_emails as string[]) ?? [],
        versionTime: toDate(r.version_time),
        source: r.source as "scheduling" | "bot",
      };
    },

    /** Records a send; a repeated event id changes nothing. */
    async recordEmailSend(e: EmailSend): Promise<void> {
      await q.query(
        `INSERT INTO crm.email_activity (event_id, org_id, recipient_email, occurred_at, subject, sender_name)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (event_id) DO NOTHING`,
        [e.eventId, e.orgId, e.recipientEmail, e.occurredAt, e.subject, e.senderName],
      );
    },

    async listActivity(orgId: string, of: TimelineOf, f: ActivityQuery): Promise<Keyed<ActivityRow>[]> {
      const p = params();
      const org = p.add(orgId);
      const contacts =
        "contactId" in of
          ? `SELECT email FROM crm.contacts WHERE org_id = ${org} AND id = ${p.add(of.contactId)}`
          : `SELECT email FROM crm.contacts WHERE org_id = ${org} AND account_crm_id = ${p.add(of.accountCrmId)}`;
      // A meeting with several contacts of one account is one item on the account's timeline.
      const meetings = `SELECT 'meeting' AS type, m.start_time AS occurred_at, m.id AS item_id, m.id AS meeting_id,
          m.title, m.host_name, NULL::text AS subject, NULL::text AS sender_name
        FROM crm.meetings m
        WHERE m.org_id = ${org} AND NOT m.canceled AND NOT m.preview
          AND m.attendee_emails && ARRAY(${contacts})`;
      const emails = `SELECT 'email' AS type, e.occurred_at, 'email:' || e.event_id AS item_id, NULL::text AS meeting_id,
          NULL::text AS title, NULL::text AS host_name, e.subject, e.sender_name
        FROM crm.email_activity e
        WHERE e.org_id = ${org} AND e.recipient_email IN (${contacts})`;
      const parts = [
        ...(f.types.includes("meeting") ? [meetings] : []),
        ...(f.types.includes("email") ? [emails] : []),
      ];
      if (parts.length === 0) return [];
      const page = keyset(f.sort.key, "t.item_id", f.sort.descending, f.after, p);
      const rows = await q.query(
        `SELECT t.* FROM (${parts.join(" UNION ALL ")}) t
          WHERE t.occurred_at >= ${p.add(f.since)} AND ${page.where}
          ORDER BY ${page.orderBy} LIMIT ${p.add(f.limit)}`,
        p.values,
      );
      return rows.map((r) => {
        const occurredAt = toDate(r.occurred_at);
        const item: ActivityRow =
          r.type === "meeting"
            ? {
                type: "meeting",
                itemId: String(r.item_id),
                occurredAt,
                meeting: { id: String(r.meeting_id), title: String(r.title), hostName: String(r.host_name) },
              }
            : {
                type: "email",
                itemId: String(r.item_id),
                occurredAt,
                email: { subject: String(r.subject), senderName: String(r.sender_name) },
              };
        return { item, position: [positionValue(r.occurred_at), item.itemId] };
      });
    },
  };
}
