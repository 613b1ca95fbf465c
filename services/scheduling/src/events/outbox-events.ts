import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  MeetingBookedSchema,
  MeetingCanceledSchema,
  MeetingRescheduledSchema,
} from "@platform/contracts/events/scheduling";
import type { Meeting } from "@platform/contracts/scheduling";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import type { OutboxEvent } from "@platform/kit/outbox";
import { outboxEventsOf } from "@platform/kit/outbox-events";

// The meeting events as outbox rows, keyed by the org so one org's meetings stay in order on
// their partition. Every event carries the canonical meeting (the v2 webhook payload).

const schedulingEvent = outboxEventsOf("scheduling", TOPICS.scheduling);

/** A meeting's events are keyed by its org and about the meeting. */
const aboutMeeting = (meeting: Meeting, at: Date) => ({ key: meeting.orgId, subject: meeting.id, time: at });

/** Published for previews too: consumers that sync a CRM or deliver webhooks skip those by meeting.smartScheduling.preview. */
export function meetingBookedEvent(meeting: Meeting, at: Date, sandbox = false): OutboxEvent {
  const data = { meeting, sandbox };
  return schedulingEvent(EVENT_TYPES.meetingBooked, MeetingBookedSchema, data, aboutMeeting(meeting, at));
}

export function meetingRescheduledEvent(
  meeting: Meeting,
  previous: { start: Date; end: Date; hostUserId: string },
  reason: string,
  at: Date,
): OutboxEvent {
  const data = {
    meeting,
    reason,
    previousStartTime: timestampFromDate(previous.start),
    previousEndTime: timestampFromDate(previous.end),
    previousHostUserId: previous.hostUserId,
  };
  return schedulingEvent(EVENT_TYPES.meetingRescheduled, MeetingRescheduledSchema, data, aboutMeeting(meeting, at));
}

export function meetingCanceledEvent(
  meeting: Meeting,
  reason: string,
  sendNotifications: boolean,
  at: Date,
  sandbox = false,
): OutboxEvent {
  const data = { meeting, reason, sendNotifications, sandbox };
  return schedulingEvent(EVENT_TYPES.meetingCanceled, MeetingCanceledSchema, data, aboutMeeting(meeting, at));
}
