import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import {
  MeetingBookedSchema,
  MeetingCanceledSchema,
  MeetingRescheduledSchema,
} from "@platform/contracts/events/scheduling";
import { meetingJson } from "@platform/contracts/rest/meeting";
import type { Meeting } from "@platform/contracts/scheduling";
import { EVENT_TYPES } from "@platform/kit/events";
import { MEETING_EVENT_TYPES } from "./catalog.js";

/** An event as stored for delivery. */
export interface StoredEvent {
  id: string;
  type: string;
  /** The event's data as its producer published it (the proto message's JSON). */
  data: unknown;
  occurredAt: Date;
  /** W3C trace context of the request that caused it; its deliveries continue that trace. */
  traceparent?: string;
}

export type PayloadVersion = "v2" | "legacy";

const options = { ignoreUnknownFields: true };

interface MeetingEventData {
  meeting: Meeting;
  /** The caller's reason on reschedules and cancellations; null when none was given. */
  reason: string | null;
  sandbox: boolean;
}

/** A meeting event's data; throws when it carries no meeting. */
function meetingEventData(type: string, data: unknown): MeetingEventData {
  const json = data as JsonValue;
  let parsed: { meeting?: Meeting; reason?: string; sandbox?: boolean };
  if (type === EVENT_TYPES.meetingBooked) parsed = fromJson(MeetingBookedSchema, json, options);
  else if (type === EVENT_TYPES.meetingRescheduled) parsed = fromJson(MeetingRescheduledSchema, json, options);
  else parsed = fromJson(MeetingCanceledSchema, json, options);
  if (!parsed.meeting) throw new Error(`${type} without a meeting`);
  return {
    meeting: parsed.meeting,
    reason: parsed.reason ? parsed.reason : null,
    sandbox: parsed.sandbox ?? false,
  };
}

/** Who receives an event: its org, or nobody (sandbox state, preview bookings). */
export type Audience = { deliver: true; orgId: string } | { deliver: false; why: string };

/**
 * The org an event is delivered to. Meeting events name it in the meeting; other contexts'
 * events in `orgId` of their data, else in the message key (their partition key is the org).
 * Preview bookings (and every later event of a preview meeting) and the sandbox's seeded
 * events deliver nothing. Throws on an unreadable meeting event.
 */
export function audienceOf(type: string, data: unknown, key: string): Audience {
  if (MEETING_EVENT_TYPES.has(type)) {
    const { meeting, sandbox } = meetingEventData(type, data);
    if (sandbox) return { deliver: false, why: "sandbox" };
    if (meeting.smartScheduling?.preview) return { deliver: false, why: "preview" };
    return { deliver: true, orgId: meeting.orgId };
  }
  const record = (data ?? {}) as Record<string, unknown>;
  if (record.sandbox === true) return { deliver: false, why: "sandbox" };
  const orgId = typeof record.orgId === "string" && record.orgId !== "" ? record.orgId : key;
  return orgId ? { deliver: true, orgId } : { deliver: false, why: "no org" };
}

/** v2 data of a meeting event: the canonical Meeting, plus the reason of reschedules and cancellations. */
function meetingDataV2(type: string, data: unknown): Record<string, unknown> {
  const { meeting, reason } = meetingEventData(type, data);
  return type === EVENT_TYPES.meetingBooked
    ? { meeting: meetingJson(meeting) }
    : { meeting: meetingJson(meeting), reason };
}

/**
 * The legacy nested shape (subscriptions that predate v2 keep it): the event kind as `event`,
 * and under `payload` a reduced meeting with `start`/`end`, `host` and `invitee` objects and
 * the form answers as `questions_and_answers`.
 */
function meetingDataLegacy(type: string, data: unknown): Record<string, unknown> {
  const { meeting: m, reason } = meetingEventData(type, data);
  const json = meetingJson(m);
  return {
    meeting: {
      id: json.id,
      title: json.title,
      status: json.status,
      start: json.startTime,
      end: json.endTime,
      timezone: json.timeZone,
      host: { id: json.host.userId, email: json.host.email, name: json.host.displayName },
      invitee: {
        email: json.attendee.email,
        name: `${json.attendee.firstName} ${json.attendee.lastName}`.trim(),
        phone: json.attendee.phone,
        timezone: json.attendee.timeZone,
      },
      questions_and_answers: (json.smartScheduling?.formValues ?? []).map((f) => ({
        question: f.key,
        answer: f.answer,
      })),
      join_url: json.location?.joinUrl ?? null,
    },
    ...(type === EVENT_TYPES.meetingBooked ? {} : { reason }),
  };
}

/**
 * The JSON body POSTed for an event, in the subscription's payload version. A test delivery
 * (POST …/test: the ping, or an example of a catalog kind) carries `"test": true` after the
 * envelope's fields; every other body is exactly as before, without it.
 */
export function renderPayload(event: StoredEvent, version: PayloadVersion, marks: { test?: boolean } = {}): string {
  const meeting = MEETING_EVENT_TYPES.has(event.type);
  const test = marks.test ? { test: true } : {};
  if (version === "legacy") {
    return JSON.stringify({
      event: event.type,
      event_id: event.id,
      created_at: event.occurredAt.toISOString(),
      payload: meeting ? meetingDataLegacy(event.type, event.data) : event.data,
      ...test,
    });
  }
  return JSON.stringify({
    id: event.id,
    type: event.type,
    timestamp: event.occurredAt.toISOString(),
    data: meeting ? meetingDataV2(event.type, event.data) : event.data,
    ...test,
  });
}
