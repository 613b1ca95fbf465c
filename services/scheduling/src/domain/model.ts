/** An answer to a matching-form field: a scalar, or the chosen options of a multi-select. */
export type FormAnswer = string | number | boolean | string[];

/** A matching-form field; `key` is the stable id the integrator sends values under. */
export interface FormField {
  key: string;
  label: string;
  type: "select" | "multi-select" | "text" | "number" | "boolean";
  /** The allowed answers of `select` and `multi-select`; empty for the other types. */
  options: string[];
  required: boolean;
}

/** A survey question. Responses arrive keyed by `label` (the question text), not by `key`. */
export interface SurveyQuestion {
  key: string;
  label: string;
  type: "long-text" | "text";
  required: boolean;
}

/**
 * Matches when the answer to `fieldKey`, or any element of an array answer, equals one of
 * `anyOf`. Booleans and numbers are compared by `String()` (`true` matches "true").
 */
export interface RoutingCondition {
  fieldKey: string;
  anyOf: string[];
}

/** Applies when every condition matches. `hostGroups` = user ids by priority, index 0 most preferred. */
export interface RoutingRule {
  when: RoutingCondition[];
  hostGroups: string[][];
}

/** Rules in order (the first match wins) and the host groups used when none matches. */
export interface Routing {
  rules: RoutingRule[];
  fallback: string[][];
}

/**
 * A block of working time on one ISO weekday (Monday = 1), as local wall-clock "HH:MM" times
 * in the host's zone; `end` > `start` and may be "24:00". A day may have several blocks.
 */
export interface WorkingHours {
  weekday: 1 | 2 | 3 | 4 | 5 | 6 | 7;
  start: string;
  end: string;
}

/** A half-open interval [start, end) of instants. */
export interface TimeRange {
  start: Date;
  end: Date;
}

/** What availability needs to know about one host. */
export interface HostCalendar {
  userId: string;
  displayName: string;
  /** IANA zone the working hours are expressed in. */
  timeZone: string;
  workingHours: WorkingHours[];
  /** The host's existing non-canceled meetings plus external busy blocks; any order, may overlap. */
  busy: TimeRange[];
}

/** How soon and how far ahead a schedule can be booked. */
export interface BookingWindow {
  minAdvanceMinutes: number;
  maxAdvanceDays: number;
}

/** What a slot token carries. Times are ISO 8601 UTC strings. */
export interface SlotTokenPayload {
  orgId: string;
  scheduleId: string;
  hostUserId: string;
  start: string;
  end: string;
  expiresAt: string;
  preview: boolean;
  /** `formValuesHash` of the form values the availability was computed for. */
  formValuesHash: string;
}

/** One entry of a `fieldErrors` list. */
export interface FieldError {
  field: string;
  message: string;
}

// The records the store reads and writes. Nullable fields are null, never undefined, so a
// record survives the JSON round trip of jsonb columns and idempotent replays unchanged.

/** Drafts are never visible through the API; disabled schedules are listed but take no bookings. */
export type ScheduleStatus = "active" | "disabled" | "draft";

export type VideoProvider = "video_a" | "video_b" | "video_c";

export type LocationType = "video" | "phone" | "in-person" | "custom";

/** Where a schedule's meetings happen; a meeting copies it and adds the join URL of its conference. */
export interface LocationRecord {
  type: LocationType;
  /** Video only. */
  provider: VideoProvider | null;
  joinUrl: string | null;
  /** In-person, phone, or custom free text. */
  address: string | null;
}

export interface ScheduleRecord {
  id: string;
  orgId: string;
  name: string;
  description: string;
  status: ScheduleStatus;
  durationMinutes: number;
  /** Allowed meeting lengths; includes durationMinutes. */
  bookingPeriods: number[];
  /** Distance between candidate slot starts. */
  stepMinutes: number;
  timeZone: string;
  bookingWindow: BookingWindow;
  matchingForm: FormField[];
  surveyQuestions: SurveyQuestion[];
  routing: Routing;
  location: LocationRecord | null;
  /** Confirmation emails to host and attendee; the booking request cannot override it. */
  sendConfirmations: boolean;
  publishedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A user of identity as scheduling sees it, with the hours and zone scheduling owns. */
export interface HostRecord {
  userId: string;
  orgId: string;
  email: string;
  firstName: string;
  lastName: string;
  displayName: string;
  timeZone: string;
  workingHours: WorkingHours[];
}

export interface AttendeeRecord {
  email: string;
  firstName: string;
  lastName: string;
  /** E.164; its presence is what triggers SMS notices. */
  phone: string | null;
  timeZone: string | null;
}

export interface ConferencingRecord {
  provider: VideoProvider;
  providerMeetingId: string;
}

/** The UTM parameters of the booking request; each null when absent. */
export interface CampaignRecord {
  id: string | null;
  source: string | null;
  medium: string | null;
  campaign: string | null;
  term: string | null;
  content: string | null;
}

export interface FormValueRecord {
  key: string;
  answer: FormAnswer;
}

export interface SurveyResponseRecord {
  question: string;
  answer: string;
}

export interface MeetingRecord {
  id: string;
  orgId: string;
  scheduleId: string;
  hostUserId: string;
  attendee: AttendeeRecord;
  additionalAttendees: string[];
  title: string;
  start: Date;
  end: Date;
  /** The schedule's zone at booking time. */
  timeZone: string;
  location: LocationRecord | null;
  conferencing: ConferencingRecord | null;
  calendarEventId: string | null;
  formValues: FormValueRecord[];
  surveyResponses: SurveyResponseRecord[];
  campaign: CampaignRecord | null;
  preview: boolean;
  canceledAt: Date | null;
  cancelReason: string | null;
  createdAt: Date;
  updatedAt: Date;
  version: number;
}

/** One line of a meeting's audit trail. */
export interface MeetingAuditEntry {
  meetingId: string;
  at: Date;
  action: "booked" | "rescheduled" | "canceled";
  reason: string | null;
  previous: { start: Date; end: Date; hostUserId: string } | null;
  next: { start: Date; end: Date; hostUserId: string } | null;
}
