import { type JsonValue, toJson } from "@bufbuild/protobuf";
import { type Value, ValueSchema } from "@bufbuild/protobuf/wkt";
import type { BookMeetingRequest, Campaign } from "@platform/contracts/scheduling";
import { problem } from "@platform/kit/problems";
import { emailProblem, validateAttendee, validateSurvey } from "../domain/attendee.js";
import { isSlotAvailable } from "../domain/availability.js";
import { isWithinWindow } from "../domain/booking-window.js";
import { assertValidFormValues, formValuesHash } from "../domain/form.js";
import { meetingTitle } from "../domain/meeting-title.js";
import type {
  AttendeeRecord,
  CampaignRecord,
  FieldError,
  FormAnswer,
  FormField,
  FormValueRecord,
  HostCalendar,
  HostRecord,
  MeetingRecord,
  ScheduleRecord,
  SurveyQuestion,
  SurveyResponseRecord,
  TimeRange,
} from "../domain/model.js";
import { type VerifiedSlotToken, verifySlotToken } from "../domain/slot-token.js";
import type { HostStore, ScheduleStore } from "../store/index.js";

// The checks of booking and rescheduling (and the schedule look-ups availability shares),
// between the request and the domain rules: each turns a rule's verdict into the spec's problem.

const MINUTE_MS = 60_000;

const scheduleNotFound = (id: string) => problem("schedule-not-found", `Schedule ${id} was not found.`);

/** The org's schedule as the API sees it: drafts are as absent as unknown ids. */
export async function visibleSchedule(
  reads: ScheduleStore & HostStore,
  orgId: string,
  id: string,
): Promise<ScheduleRecord> {
  const schedule = await reads.findSchedule(orgId, id);
  if (!schedule || schedule.status === "draft") throw scheduleNotFound(id);
  return schedule;
}

/** A visible schedule that takes bookings: a disabled one is 422 schedule-unavailable. */
export async function bookableSchedule(
  reads: ScheduleStore & HostStore,
  orgId: string,
  id: string,
): Promise<ScheduleRecord> {
  const schedule = await visibleSchedule(reads, orgId, id);
  if (schedule.status !== "active") {
    throw problem("schedule-unavailable", `Schedule ${id} is disabled and takes no bookings.`);
  }
  return schedule;
}

/** A genuine, unexpired token of the caller's org (a token of another org is as invalid as a forged one). */
export function verifiedToken(token: string, secret: string, orgId: string, now: Date): VerifiedSlotToken {
  return verifySlotToken(token, secret, orgId, now);
}

export const slotOf = (token: VerifiedSlotToken): TimeRange => ({ start: token.start, end: token.end });

/** Form values as the JSON the domain validates and hashes (protobuf Values carry any JSON). */
export function formValuesOf(values: { [key: string]: Value }): Record<string, JsonValue> {
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, toJson(ValueSchema, value)]));
}

export function hostCalendar(host: HostRecord, busy: TimeRange[]): HostCalendar {
  return {
    userId: host.userId,
    displayName: host.displayName,
    timeZone: host.timeZone,
    workingHours: host.workingHours,
    busy,
  };
}

const conflict = (detail: string) => problem("slot-conflict", detail, { rerunAvailability: true });

/**
 * The host of a token's slot, when the slot can still be booked: inside the booking window
 * now, the host still assigned, and still free by its working hours and external busy
 * blocks. Other meetings are left to the double-booking constraint, which alone is right
 * under concurrency. Anything else is 409 slot-conflict: the client should look again.
 */
export async function hostOfFreeSlot(
  reads: ScheduleStore & HostStore,
  schedule: ScheduleRecord,
  hostUserId: string,
  slot: TimeRange,
  now: Date,
): Promise<HostRecord> {
  if (!isWithinWindow(schedule.bookingWindow, now, slot)) {
    throw conflict("The slot is no longer inside the schedule's booking window; run availability again.");
  }
  const host = (await reads.listAssignees(schedule.id)).find((h) => h.userId === hostUserId);
  if (!host) throw conflict("The slot's host no longer takes meetings of this schedule; run availability again.");
  const minutes = (slot.end.getTime() - slot.start.getTime()) / MINUTE_MS;
  const calendar = hostCalendar(host, await reads.busyBlocks(host.userId, slot));
  if (!isSlotAvailable(calendar, slot, minutes, schedule.stepMinutes)) {
    throw conflict("The host is no longer free at that time; run availability again.");
  }
  return host;
}

const MAX_ADDITIONAL_ATTENDEES = 50;

const formValidation = (fieldErrors: FieldError[]) =>
  problem("form-validation", "The booking request has invalid fields.", { fieldErrors });

function additionalAttendeeErrors(emails: string[]): FieldError[] {
  if (emails.length > MAX_ADDITIONAL_ATTENDEES) {
    return [{ field: "additionalAttendees", message: `must list at most ${MAX_ADDITIONAL_ATTENDEES} addresses` }];
  }
  return emails.flatMap((email, i) => {
    const why = emailProblem(email);
    return why ? [{ field: `additionalAttendees[${i}]`, message: why }] : [];
  });
}

/** The attendee, their guests and survey answers of a booking request, or the problem with them. */
function bookingParty(req: BookMeetingRequest, questions: SurveyQuestion[]) {
  const attendee: AttendeeRecord = {
    email: req.attendee?.email ?? "",
    firstName: req.attendee?.firstName ?? "",
    lastName: req.attendee?.lastName ?? "",
    phone: req.attendee?.phone ?? null,
    timeZone: req.attendee?.timeZone ?? null,
  };
  const errors = [...validateAttendee(attendee), ...additionalAttendeeErrors(req.additionalAttendees)];
  if (errors.length > 0) throw formValidation(errors);
  const survey = validateSurvey(questions, req.surveyResponses);
  if (survey.unknown.length > 0) {
    throw problem("booking-validation-failed", `Unknown survey questions: ${survey.unknown.join("; ")}.`, {
      unknownQuestions: survey.unknown,
    });
  }
  if (survey.errors.length > 0) throw formValidation(survey.errors);
  // Kept in the schedule's question order; a blank answer is no answer.
  const surveyResponses: SurveyResponseRecord[] = questions.flatMap((q) => {
    const answer = Object.hasOwn(req.surveyResponses, q.label) ? req.surveyResponses[q.label] : undefined;
    return answer === undefined || answer.trim() === "" ? [] : [{ question: q.label, answer }];
  });
  return { attendee, additionalAttendees: req.additionalAttendees, surveyResponses };
}

/** Answers in the matching form's field order; absent and null answers are left out. */
function formValueRecords(form: FormField[], values: Record<string, JsonValue>): FormValueRecord[] {
  return form.flatMap((f) => {
    const answer = Object.hasOwn(values, f.key) ? values[f.key] : undefined;
    // Validated: what is there is an answer.
    return answer === undefined || answer === null ? [] : [{ key: f.key, answer: answer as FormAnswer }];
  });
}

/** UTM data; empty parameters count as absent, and no data at all is null. */
function campaignRecord(c: Campaign | undefined): CampaignRecord | null {
  if (!c) return null;
  const record: CampaignRecord = {
    id: c.id || null,
    source: c.source || null,
    medium: c.medium || null,
    campaign: c.campaign || null,
    term: c.term || null,
    content: c.content || null,
  };
  return Object.values(record).some((v) => v !== null) ? record : null;
}

/** A booking request that passed every check, with what the meeting will store of it. */
export interface CheckedBooking {
  schedule: ScheduleRecord;
  host: HostRecord;
  slot: TimeRange;
  preview: boolean;
  attendee: AttendeeRecord;
  additionalAttendees: string[];
  formValues: FormValueRecord[];
  surveyResponses: SurveyResponseRecord[];
  campaign: CampaignRecord | null;
}

/**
 * Checks a booking request in the spec's order: the token (genuine, unexpired, of this org),
 * its schedule (visible, active), the form values (those of the token, still valid), the
 * attendee and guests, the survey, then whether the slot is still free.
 */
export async function checkBooking(
  reads: ScheduleStore & HostStore,
  req: BookMeetingRequest,
  opts: { orgId: string; slotTokenSecret: string; now: Date },
): Promise<CheckedBooking> {
  const { orgId, now } = opts;
  const token = verifiedToken(req.slotToken, opts.slotTokenSecret, orgId, now);
  const schedule = await bookableSchedule(reads, orgId, token.scheduleId);
  const values = formValuesOf(req.formValues);
  // Any JSON hashes; values that are not answers simply never match the token's hash.
  if (!token.issuedFor(formValuesHash(values as Record<string, FormAnswer>))) {
    throw problem("slot-token-invalid", "The form values differ from those the slot token was issued for.");
  }
  assertValidFormValues(schedule.matchingForm, values);
  const party = bookingParty(req, schedule.surveyQuestions);
  const slot = slotOf(token);
  const host = await hostOfFreeSlot(reads, schedule, token.hostUserId, slot, now);
  return {
    schedule,
    host,
    slot,
    preview: token.preview,
    ...party,
    formValues: formValueRecords(schedule.matchingForm, values),
    campaign: campaignRecord(req.campaign),
  };
}

/** The meeting a checked booking creates: at the schedule's location, without conference or calendar event yet. */
export function newMeeting(b: CheckedBooking, id: string, now: Date): MeetingRecord {
  return {
    id,
    orgId: b.schedule.orgId,
    scheduleId: b.schedule.id,
    hostUserId: b.host.userId,
    attendee: b.attendee,
    additionalAttendees: b.additionalAttendees,
    title: meetingTitle(b.schedule.name, b.attendee),
    start: b.slot.start,
    end: b.slot.end,
    timeZone: b.schedule.timeZone,
    location: b.schedule.location,
    conferencing: null,
    calendarEventId: null,
    formValues: b.formValues,
    surveyResponses: b.surveyResponses,
    campaign: b.campaign,
    preview: b.preview,
    canceledAt: null,
    cancelReason: null,
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
}
