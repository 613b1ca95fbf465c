import type {
  CampaignRecord,
  FormAnswer,
  LocationRecord,
  ScheduleSettings,
  VideoProvider,
  WorkingHours,
} from "@platform/contracts/rest/schedule";

// The schedule's settings and the records built of them are shared with the sandbox's
// definitions; scheduling's modules import them from here.
export type {
  BookingWindow,
  CampaignRecord,
  FormAnswer,
  FormField,
  LocationRecord,
  LocationType,
  ScheduleSettings,
  ScheduleStatus,
  VideoProvider,
  WorkingHours,
} from "@platform/contracts/rest/schedule";

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

export interface ScheduleRecord extends ScheduleSettings {
  id: string;
  orgId: string;
  surveyQuestions: SurveyQuestion[];
  routing: Routing;
  publishedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Who a host is, as identity's users describe it. */
export interface HostIdentity {
  userId: string;
  orgId: string;
  email: string;
  firstName: string;
  lastName: string;
  displayName: string;
}

/** A user of identity as scheduling sees it, with the hours and zone scheduling owns. */
export interface HostRecord extends HostIdentity {
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
