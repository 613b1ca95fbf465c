import { type JsonValue, toJson } from "@bufbuild/protobuf";
import { type Value, ValueSchema } from "@bufbuild/protobuf/wkt";
import type { Meeting } from "../gen/platform/scheduling/v1/meeting_pb.js";
import { iso, nullsWhenUnset, timestampsJson } from "./json.js";

// The REST JSON of the canonical Meeting: what GET /scheduled-meetings/{id} answers and what
// v2 webhook payloads carry. Fields the contract always sets are asserted: their absence is a
// producer bug, so a plain Error (the gateway logs it and answers an opaque 500).

/** A meeting's status as the API reports it. */
export type MeetingStatus = "scheduled" | "completed" | "canceled";

/**
 * Derived, never stored: canceled wins over everything; otherwise completed once the end time
 * has been reached (end <= now), else scheduled. No sweeper runs, so this is computed on read.
 * The one rule behind scheduling's meetings and revenue's meetings of a deal.
 */
export function meetingStatus(m: { end: Date; canceled: boolean }, now: Date): MeetingStatus {
  if (m.canceled) return "canceled";
  return m.end.getTime() <= now.getTime() ? "completed" : "scheduled";
}

/**
 * An attendee with an unset phone or zone as an explicit null: the REST JSON, and the
 * attendee record scheduling stores (the same shape).
 */
export function attendeeJson(a: {
  email: string;
  firstName: string;
  lastName: string;
  phone?: string | undefined;
  timeZone?: string | undefined;
}) {
  return {
    email: a.email,
    firstName: a.firstName,
    lastName: a.lastName,
    ...nullsWhenUnset(a, "phone", "timeZone"),
  };
}

function answerJson(answer: Value | undefined): JsonValue {
  if (!answer) throw new Error("meeting has a form value without its answer");
  return toJson(ValueSchema, answer);
}

function smartSchedulingJson(m: Meeting) {
  const s = m.smartScheduling;
  if (!s) return null;
  const c = s.campaign;
  return {
    scheduleId: s.scheduleId,
    formValues: s.formValues.map((f) => ({ key: f.key, answer: answerJson(f.answer) })),
    surveyResponses: s.surveyResponses.map((r) => ({ question: r.question, answer: r.answer })),
    rescheduleUrl: s.rescheduleUrl,
    cancelUrl: s.cancelUrl,
    campaign: c
      ? {
          id: c.id ?? null,
          source: c.source ?? null,
          medium: c.medium ?? null,
          campaign: c.campaign ?? null,
          term: c.term ?? null,
          content: c.content ?? null,
        }
      : null,
    preview: s.preview,
  };
}

/**
 * The canonical Meeting. Absent values are explicit nulls (an empty list for
 * additionalAttendees), and the four booking-kind sub-objects are always present, so every
 * payload has the same members; the contract carries Smart Schedule bookings only, so the
 * other three are null.
 */
export function meetingJson(m: Meeting) {
  if (!m.host) throw new Error("meeting has no host");
  if (!m.attendee) throw new Error("meeting has no attendee");
  const { location, conferencing } = m;
  return {
    id: m.id,
    orgId: m.orgId,
    host: {
      userId: m.host.userId,
      email: m.host.email,
      firstName: m.host.firstName,
      lastName: m.host.lastName,
      displayName: m.host.displayName,
    },
    attendee: attendeeJson(m.attendee),
    additionalAttendees: m.additionalAttendees,
    title: m.title,
    startTime: iso(m.startTime, "start_time"),
    endTime: iso(m.endTime, "end_time"),
    timeZone: m.timeZone,
    location: location
      ? {
          type: location.type,
          provider: location.provider ?? null,
          joinUrl: location.joinUrl ?? null,
          address: location.address ?? null,
        }
      : null,
    conferencing: conferencing
      ? { provider: conferencing.provider, providerMeetingId: conferencing.providerMeetingId }
      : null,
    calendarEventId: m.calendarEventId ?? null,
    status: m.status,
    ...timestampsJson(m),
    smartScheduling: smartSchedulingJson(m),
    personalScheduling: null,
    teamScheduling: null,
    meetingAi: null,
  };
}
