import type { Row } from "@platform/kit/db";
import type {
  AttendeeRecord,
  BookingWindow,
  CampaignRecord,
  ConferencingRecord,
  FormField,
  FormValueRecord,
  HostRecord,
  LocationRecord,
  MeetingRecord,
  Routing,
  ScheduleRecord,
  ScheduleStatus,
  SurveyQuestion,
  SurveyResponseRecord,
  WorkingHours,
} from "../domain/model.js";

// Database rows to records and back. Both drivers return timestamps as Dates and jsonb as
// parsed JSON, but a JSON round trip (to_jsonb) turns times into strings, so those are accepted too.

const date = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));
const dateOrNull = (v: unknown): Date | null => (v === null || v === undefined ? null : date(v));
const textOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** A jsonb parameter: SQL NULL for null (JSON.stringify would store the JSON value null). */
const jsonb = (v: unknown): string | null => (v === null || v === undefined ? null : JSON.stringify(v));

export function toSchedule(r: Row): ScheduleRecord {
  return {
    id: String(r.id),
    orgId: String(r.org_id),
    name: String(r.name),
    description: String(r.description),
    status: r.status as ScheduleStatus,
    durationMinutes: Number(r.duration_minutes),
    bookingPeriods: (r.booking_periods as unknown[]).map(Number),
    stepMinutes: Number(r.step_minutes),
    timeZone: String(r.time_zone),
    bookingWindow: {
      minAdvanceMinutes: Number(r.min_advance_minutes),
      maxAdvanceDays: Number(r.max_advance_days),
    } satisfies BookingWindow,
    matchingForm: r.matching_form as FormField[],
    surveyQuestions: r.survey_questions as SurveyQuestion[],
    routing: r.routing as Routing,
    location: (r.location ?? null) as LocationRecord | null,
    sendConfirmations: Boolean(r.send_confirmations),
    publishedAt: dateOrNull(r.published_at),
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
  };
}

export function scheduleColumns(s: ScheduleRecord): [string, unknown, string?][] {
  return [
    ["id", s.id],
    ["org_id", s.orgId],
    ["name", s.name],
    ["description", s.description],
    ["status", s.status],
    ["duration_minutes", s.durationMinutes],
    ["booking_periods", s.bookingPeriods, "int[]"],
    ["step_minutes", s.stepMinutes],
    ["time_zone", s.timeZone],
    ["min_advance_minutes", s.bookingWindow.minAdvanceMinutes],
    ["max_advance_days", s.bookingWindow.maxAdvanceDays],
    ["matching_form", jsonb(s.matchingForm), "jsonb"],
    ["survey_questions", jsonb(s.surveyQuestions), "jsonb"],
    ["routing", jsonb(s.routing), "jsonb"],
    ["location", jsonb(s.location), "jsonb"],
    ["send_confirmations", s.sendConfirmations],
    ["published_at", s.publishedAt],
    ["created_at", s.createdAt],
    ["updated_at", s.updatedAt],
  ];
}

export function toHost(r: Row): HostRecord {
  return {
    userId: String(r.user_id),
    orgId: String(r.org_id),
    email: String(r.email),
    firstName: String(r.first_name),
    lastName: String(r.last_name),
    displayName: String(r.display_name),
    timeZone: String(r.time_zone),
    workingHours: r.working_hours as WorkingHours[],
  };
}

export function hostColumns(h: HostRecord): [string, unknown, string?][] {
  return [
    ["user_id", h.userId],
    ["org_id", h.orgId],
    ["email", h.email],
    ["first_name", h.firstName],
    ["last_name", h.lastName],
    ["display_name", h.displayName],
    ["time_zone", h.timeZone],
    ["working_hours", jsonb(h.workingHours), "jsonb"],
  ];
}

export function toMeeting(r: Row): MeetingRecord {
  return {
    id: String(r.id),
    orgId: String(r.org_id),
    scheduleId: String(r.schedule_id),
    hostUserId: String(r.host_user_id),
    attendee: {
      email: String(r.attendee_email),
      firstName: String(r.attendee_first_name),
      lastName: String(r.attendee_last_name),
      phone: textOrNull(r.attendee_phone),
      timeZone: textOrNull(r.attendee_time_zone),
    } satisfies AttendeeRecord,
    additionalAttendees: (r.additional_attendees as string[] | null) ?? [],
    title: String(r.title),
    start: date(r.start_time),
    end: date(r.end_time),
    timeZone: String(r.time_zone),
    location: (r.location ?? null) as LocationRecord | null,
    conferencing: (r.conferencing ?? null) as ConferencingRecord | null,
    calendarEventId: textOrNull(r.calendar_event_id),
    formValues: r.form_values as FormValueRecord[],
    surveyResponses: r.survey_responses as SurveyResponseRecord[],
    campaign: (r.campaign ?? null) as CampaignRecord | null,
    preview: Boolean(r.preview),
    canceledAt: dateOrNull(r.canceled_at),
    cancelReason: textOrNull(r.cancel_reason),
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
    version: Number(r.version),
  };
}

/** A meeting as (column, value, cast) triples: the one place that maps its fields to columns for writes. */
export function meetingColumns(m: MeetingRecord): [string, unknown, string?][] {
  return [
    ["id", m.id],
    ["org_id", m.orgId],
    ["schedule_id", m.scheduleId],
    ["host_user_id", m.hostUserId],
    ["attendee_email", m.attendee.email],
    ["attendee_first_name", m.attendee.firstName],
    ["attendee_last_name", m.attendee.lastName],
    ["attendee_phone", m.attendee.phone],
    ["attendee_time_zone", m.attendee.timeZone],
    ["additional_attendees", m.additionalAttendees, "text[]"],
    ["title", m.title],
    ["start_time", m.start],
    ["end_time", m.end],
    ["time_zone", m.timeZone],
    ["location", jsonb(m.location), "jsonb"],
    ["conferencing", jsonb(m.conferencing), "jsonb"],
    ["calendar_event_id", m.calendarEventId],
    ["form_values", jsonb(m.formValues), "jsonb"],
    ["survey_responses", jsonb(m.surveyResponses), "jsonb"],
    ["campaign", jsonb(m.campaign), "jsonb"],
    ["preview", m.preview],
    ["canceled_at", m.canceledAt],
    ["cancel_reason", m.cancelReason],
    ["created_at", m.createdAt],
    ["updated_at", m.updatedAt],
    ["version", m.version],
  ];
}

/** `INSERT INTO table (…) VALUES (…)` of column triples, with each value cast where it needs one. */
export function insertSql(table: string, cols: [string, unknown, string?][]): { sql: string; values: unknown[] } {
  return {
    sql: `INSERT INTO ${table} (${cols.map(([c]) => c).join(", ")})
          VALUES (${cols.map(([, , cast], i) => `$${i + 1}${cast ? `::${cast}` : ""}`).join(", ")})`,
    values: cols.map(([, v]) => v),
  };
}
