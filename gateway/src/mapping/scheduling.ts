import { fromJson, type JsonValue, type MessageInitShape, toJson } from "@bufbuild/protobuf";
import { type Timestamp, timestampDate, type Value, ValueSchema } from "@bufbuild/protobuf/wkt";
import type {
  BookMeetingRequestSchema,
  GetAvailabilityRequestSchema,
  GetAvailabilityResponse,
  HostRef,
  Meeting,
  SmartSchedule,
} from "@platform/contracts/scheduling";
import { problem } from "@platform/kit/problems";
import { UTM_PARAMETERS } from "../schemas/scheduling.js";
import { parseInstant } from "./time.js";

// Fields the contract always sets: their absence is a service bug, so a plain Error, which
// the error handler logs and answers with an opaque 500.

function iso(ts: Timestamp | undefined, field: string): string {
  if (!ts) throw new Error(`scheduling returned no ${field}`);
  return timestampDate(ts).toISOString();
}

const hostRefJson = (h: HostRef) => ({ userId: h.userId, displayName: h.displayName });

/** A matching-form answer, as its schema admits it. */
type FormAnswer = string | number | boolean | string[];

export function smartScheduleSummaryJson(s: SmartSchedule) {
  return {
    id: s.id,
    name: s.name,
    description: s.description,
    status: s.status,
    durationMinutes: s.durationMinutes,
    timeZone: s.timeZone,
    ...(s.publishTime ? { publishedAt: iso(s.publishTime, "publish_time") } : {}),
    updatedAt: iso(s.updateTime, "update_time"),
  };
}

export function smartScheduleJson(s: SmartSchedule) {
  if (!s.bookingWindow) throw new Error("scheduling returned no booking_window");
  return {
    ...smartScheduleSummaryJson(s),
    bookingWindow: {
      minAdvanceMinutes: s.bookingWindow.minAdvanceMinutes,
      maxAdvanceDays: s.bookingWindow.maxAdvanceDays,
    },
    matchingForm: {
      fields: s.matchingFormFields.map((f) => ({
        key: f.key,
        label: f.label,
        type: f.type,
        options: f.options,
        required: f.required,
      })),
    },
    surveyQuestions: s.surveyQuestions.map((q) => ({ key: q.key, label: q.label, type: q.type, required: q.required })),
    assignees: s.assignees.map((h) => ({ host: hostRefJson(h) })),
  };
}

/** The body of POST /smart-schedules/{scheduleId}/availability, as its schema admits it. */
export interface AvailabilityBody {
  formValues: Record<string, FormAnswer>;
  dateRange?: { start: string; end: string };
  durationMinutes?: number;
  timeZone?: string;
  preview: boolean;
}

function formValueMap(values: Record<string, FormAnswer>): Record<string, Value> {
  return Object.fromEntries(Object.entries(values).map(([key, answer]) => [key, fromJson(ValueSchema, answer)]));
}

function rangeBound(body: AvailabilityBody, bound: "start" | "end"): Timestamp {
  const raw = body.dateRange?.[bound] ?? "";
  const instant = parseInstant(raw, { allowDate: false });
  if (!instant) {
    throw problem(
      "availability-request-invalid",
      `Field 'dateRange.${bound}' must be an ISO 8601 date-time with a zone, e.g. 2026-01-15T09:30:00Z.`,
      { field: `dateRange.${bound}` },
    );
  }
  return instant;
}

export function availabilityRequest(
  scheduleId: string,
  body: AvailabilityBody,
): MessageInitShape<typeof GetAvailabilityRequestSchema> {
  return {
    scheduleId,
    formValues: formValueMap(body.formValues),
    ...(body.dateRange ? { rangeStart: rangeBound(body, "start"), rangeEnd: rangeBound(body, "end") } : {}),
    ...(body.durationMinutes !== undefined ? { durationMinutes: body.durationMinutes } : {}),
    timeZone: body.timeZone ?? "",
    preview: body.preview,
  };
}

export function availabilityJson(res: GetAvailabilityResponse) {
  return {
    hostGroups: res.hostGroups.map((group) =>
      group.hosts.map((h) => {
        if (!h.host) throw new Error("scheduling returned a host group entry without its host");
        return {
          host: hostRefJson(h.host),
          slots: h.slots.map((slot) => ({
            startTime: iso(slot.startTime, "start_time"),
            endTime: iso(slot.endTime, "end_time"),
            slotToken: slot.slotToken,
          })),
        };
      }),
    ),
    matchedAt: iso(res.matchTime, "match_time"),
  };
}

/** The body of POST /scheduled-meetings, as its schema admits it. */
export interface BookingBody {
  slotToken: string;
  attendee: { firstName: string; lastName: string; email: string; phone?: string | null; timeZone?: string | null };
  formValues: Record<string, FormAnswer>;
  surveyResponses?: Record<string, string>;
  additionalAttendees?: string[];
}

export type BookingQuery = { [K in keyof typeof UTM_PARAMETERS]?: string };

export function bookingRequest(
  body: BookingBody,
  query: BookingQuery,
): MessageInitShape<typeof BookMeetingRequestSchema> {
  const { phone, timeZone, ...names } = body.attendee;
  const campaign = Object.fromEntries(
    Object.entries(UTM_PARAMETERS).flatMap(([param, member]) => {
      const value = query[param as keyof BookingQuery];
      return value === undefined ? [] : [[member, value]];
    }),
  );
  return {
    slotToken: body.slotToken,
    // Proto3 optional strings have no null: null and absent both leave them unset.
    attendee: { ...names, ...(phone != null ? { phone } : {}), ...(timeZone != null ? { timeZone } : {}) },
    formValues: formValueMap(body.formValues),
    surveyResponses: body.surveyResponses ?? {},
    additionalAttendees: body.additionalAttendees ?? [],
    ...(Object.keys(campaign).length > 0 ? { campaign } : {}),
  };
}

/** The body of PATCH /scheduled-meetings/{meetingId}, as its schema admits it. */
export interface RescheduleBody {
  slotToken: string;
  reason?: string;
}

/** The query of DELETE /scheduled-meetings/{meetingId}, after its schema's defaults. */
export interface CancelQuery {
  sendNotifications: boolean;
  reason?: string;
}

function answerJson(answer: Value | undefined): JsonValue {
  if (!answer) throw new Error("scheduling returned a form value without its answer");
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
  if (!m.host) throw new Error("scheduling returned no host");
  if (!m.attendee) throw new Error("scheduling returned no attendee");
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
    attendee: {
      email: m.attendee.email,
      firstName: m.attendee.firstName,
      lastName: m.attendee.lastName,
      phone: m.attendee.phone ?? null,
      timeZone: m.attendee.timeZone ?? null,
    },
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
    createdAt: iso(m.createTime, "create_time"),
    updatedAt: iso(m.updateTime, "update_time"),
    smartScheduling: smartSchedulingJson(m),
    personalScheduling: null,
    teamScheduling: null,
    meetingAi: null,
  };
}
