import { problem } from "@platform/kit/problems";
import { addMonths } from "./retention.js";

export const ACTIVITY_TYPES = ["meeting", "email"] as const;
export type ActivityType = (typeof ACTIVITY_TYPES)[number];

/** The spec's default lookback of the account and contact timelines. */
export const TIMELINE_LOOKBACK_MONTHS = 12;

/** The requested types, both when none is given; anything else is 400 invalid-filter. */
export function activityTypes(raw: readonly string[]): ActivityType[] {
  if (raw.length === 0) return [...ACTIVITY_TYPES];
  for (const t of raw) {
    if (!(ACTIVITY_TYPES as readonly string[]).includes(t)) {
      throw problem("invalid-filter", `type must be one of ${ACTIVITY_TYPES.join(", ")}.`, { field: "type" });
    }
  }
  return [...new Set(raw as ActivityType[])];
}

/** The lower bound of a timeline: the given instant, else 12 months before now. */
export function activitySince(since: Date | undefined, now: Date): Date {
  return since ?? addMonths(now, -TIMELINE_LOOKBACK_MONTHS);
}

/** A meeting as the timelines and the transcripts know it. */
export interface MeetingFacts {
  id: string;
  orgId: string;
  title: string;
  hostName: string;
  start: Date;
  end: Date;
  canceled: boolean;
  preview: boolean;
  /** Attendee and additional attendees, lower case, without duplicates. */
  attendeeEmails: string[];
  /** The meeting's update time at scheduling: orders the events of one meeting. */
  versionTime: Date;
}

/** The canonical meeting's fields the projection reads (the proto message satisfies it). */
export interface MeetingLike {
  id: string;
  orgId: string;
  title: string;
  status: string;
  host?: { displayName: string };
  attendee?: { email: string };
  additionalAttendees: string[];
  smartScheduling?: { preview: boolean };
}

/**
 * The projection of a meeting event. A canceled meeting keeps its row (transcripts still
 * need the meeting) but leaves the timelines; preview bookings never reach them.
 */
export function meetingFacts(
  m: MeetingLike,
  times: { start: Date; end: Date; updated: Date },
  canceled: boolean,
): MeetingFacts {
  const emails = [m.attendee?.email ?? "", ...m.additionalAttendees].map((e) => e.trim().toLowerCase());
  return {
    id: m.id,
    orgId: m.orgId,
    title: m.title,
    hostName: m.host?.displayName ?? "",
    start: times.start,
    end: times.end,
    canceled: canceled || m.status === "canceled",
    preview: m.smartScheduling?.preview ?? false,
    attendeeEmails: [...new Set(emails.filter((e) => e !== ""))],
    versionTime: times.updated,
  };
}

/** Whether a projected meeting shows on timelines. */
export function onTimeline(m: Pick<MeetingFacts, "canceled" | "preview">): boolean {
  return !m.canceled && !m.preview;
}

/** An email send as it shows on the recipient's timelines. */
export interface EmailSend {
  eventId: string;
  orgId: string;
  recipientEmail: string;
  occurredAt: Date;
  subject: string;
  senderName: string;
}

/** The email event fields the projection reads. */
export interface EmailEventLike {
  eventId: string;
  orgId: string;
  kind: number;
  recipientEmail: string;
  subject: string;
  senderDisplayName: string;
}

/** EMAIL_EVENT_KIND_SEND: only sends are timeline items (opens and clicks are signals, not activity). */
export const EMAIL_SEND_KIND = 1;

/** The timeline entry of an email event; undefined for every kind but SEND and for incomplete events. */
export function emailSendOf(e: EmailEventLike, occurredAt: Date | undefined): EmailSend | undefined {
  if (e.kind !== EMAIL_SEND_KIND || !occurredAt) return undefined;
  const recipientEmail = e.recipientEmail.trim().toLowerCase();
  if (e.eventId === "" || e.orgId === "" || recipientEmail === "") return undefined;
  return {
    eventId: e.eventId,
    orgId: e.orgId,
    recipientEmail,
    occurredAt,
    subject: e.subject,
    senderName: e.senderDisplayName,
  };
}
