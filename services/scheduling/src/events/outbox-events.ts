import { create, toJson } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  MeetingBookedSchema,
  MeetingCanceledSchema,
  MeetingRescheduledSchema,
} from "@platform/contracts/events/scheduling";
import type { Meeting } from "@platform/contracts/scheduling";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import type { OutboxEvent } from "@platform/kit/outbox";

// The meeting events as outbox rows, keyed by the org so one org's meetings stay in order on
// their partition. Every event carries the canonical meeting (the v2 webhook payload).

const SOURCE = "scheduling";

function meetingEvent(type: string, meeting: Meeting, data: unknown, at: Date): OutboxEvent {
  return { topic: TOPICS.scheduling, key: meeting.orgId, type, source: SOURCE, subject: meeting.id, data, time: at };
}

/** Published for previews too: consumers that sync a CRM or deliver webhooks skip those by meeting.smartScheduling.preview. */
export function meetingBookedEvent(meeting: Meeting, at: Date, sandbox = false): OutboxEvent {
  const data = toJson(MeetingBookedSchema, create(MeetingBookedSchema, { meeting, sandbox }));
  return meetingEvent(EVENT_TYPES.meetingBooked, meeting, data, at);
}

export function meetingRescheduledEvent(
  meeting: Meeting,
  previous: { start: Date; end: Date; hostUserId: string },
  reason: string,
  at: Date,
): OutboxEvent {
  const data = toJson(
    MeetingRescheduledSchema,
    create(MeetingRescheduledSchema, {
      meeting,
      reason,
      previousStartTime: timestampFromDate(previous.start),
      previousEndTime: timestampFromDate(previous.end),
      previousHostUserId: previous.hostUserId,
    }),
  );
  return meetingEvent(EVENT_TYPES.meetingRescheduled, meeting, data, at);
}

export function meetingCanceledEvent(
  meeting: Meeting,
  reason: string,
  sendNotifications: boolean,
  at: Date,
  sandbox = false,
): OutboxEvent {
  const data = toJson(
    MeetingCanceledSchema,
    create(MeetingCanceledSchema, { meeting, reason, sendNotifications, sandbox }),
  );
  return meetingEvent(EVENT_TYPES.meetingCanceled, meeting, data, at);
}
