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
