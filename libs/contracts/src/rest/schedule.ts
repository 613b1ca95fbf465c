// A Smart Schedule's settings as scheduling stores them and the sandbox defines them: one
// definition, so the sandbox's schedules are typed by the same rules scheduling checks.
// Nullable fields are null, never undefined, so a record survives the JSON round trip of
// jsonb columns and idempotent replays unchanged.

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

/**
 * A block of working time on one ISO weekday (Monday = 1), as local wall-clock "HH:MM" times
 * in the host's zone; `end` > `start` and may be "24:00". A day may have several blocks.
 */
export interface WorkingHours {
  weekday: 1 | 2 | 3 | 4 | 5 | 6 | 7;
  start: string;
  end: string;
}

/** How soon and how far ahead a schedule can be booked. */
export interface BookingWindow {
  minAdvanceMinutes: number;
  maxAdvanceDays: number;
}

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

/** The UTM parameters of the booking request; each null when absent. */
export interface CampaignRecord {
  id: string | null;
  source: string | null;
  medium: string | null;
  campaign: string | null;
  term: string | null;
  content: string | null;
}

/** A schedule's own settings: what the sandbox defines and the store keeps alike (hosts, routing and survey differ). */
export interface ScheduleSettings {
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
  location: LocationRecord | null;
  /** Confirmation emails to host and attendee; the booking request cannot override it. */
  sendConfirmations: boolean;
}
