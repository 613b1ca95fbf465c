import type { BookingWindow, FormAnswer, FormField, Routing, SurveyQuestion, WorkingHours } from "./domain/types.js";

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
