// The meeting use cases: booking a meeting (its conference and calendar event included),
// rescheduling and canceling one, each with its audit entry and outbox event. The handlers map
// the RPCs onto these and open the write the call's Idempotency-Key guards.
import type { BookMeetingRequest, Meeting } from "@platform/contracts/scheduling";
import type { Clock } from "@platform/kit/clock";
import { newId } from "@platform/kit/ids";
import type { Logger } from "@platform/kit/logger";
import { problem } from "@platform/kit/problems";
import type { HostRecord, MeetingRecord } from "../domain/model.js";
import { meetingStatus } from "../domain/status.js";
import { meetingBookedEvent, meetingCanceledEvent, meetingRescheduledEvent } from "../events/outbox-events.js";
import { meetingMessage } from "../messages.js";
import type { Store, TxStore } from "../store/index.js";
import { bookableSchedule, checkBooking, hostOfFreeSlot, newMeeting, slotOf, verifiedToken } from "./booking.js";
import {
  type CalendarEventInput,
  type CalendarProvider,
  type ConferencingProvider,
  withConference,
} from "./providers.js";

const MAX_CANCEL_REASON = 500;

export const meetingNotFound = (id: string) => problem("meeting-not-found", `Meeting ${id} was not found.`);

export interface MeetingUseCaseDeps {
  clock: Clock;
  logger: Logger;
  slotTokenSecret: string;
  bookingBaseUrl: string;
  calendar: CalendarProvider;
  conferencing: ConferencingProvider;
}

/** The write a booking or a move goes out in, opened by the caller for the call (once per Idempotency-Key). */
export type MeetingWrite<R> = (change: (w: TxStore) => Promise<{ meeting: Meeting }>) => Promise<R>;

function calendarEvent(m: MeetingRecord, host: HostRecord): CalendarEventInput {
  return {
    meetingId: m.id,
    hostUserId: host.userId,
    hostEmail: host.email,
    title: m.title,
    start: m.start,
    end: m.end,
    attendeeEmails: [m.attendee.email, ...m.additionalAttendees],
    where: m.location?.joinUrl ?? m.location?.address ?? null,
  };
}

/** Undoes a calendar event whose meeting was not stored; failing that, it is logged for clean-up. */
const removeOrphanEvent = ({ calendar, logger }: MeetingUseCaseDeps, eventId: string) =>
  calendar.deleteEvent(eventId).catch((err: unknown) => {
    logger.error({ err, calendarEventId: eventId }, "calendar event of a failed booking could not be removed");
  });

/** Books a meeting: checks the booking, adds its conference, creates its calendar event and stores it. */
export async function bookMeeting<R>(
  deps: MeetingUseCaseDeps,
  orgId: string,
  req: BookMeetingRequest,
  write: MeetingWrite<R>,
): Promise<R> {
  const { clock, slotTokenSecret, bookingBaseUrl, calendar, conferencing } = deps;
  // Set once the provider holds an event: any failure after that, the commit included, removes it.
  let createdEventId: string | undefined;
  try {
    return await write(async (w) => {
      // Checked inside the idempotent transaction, so a replay returns the stored meeting
      // even after its token has expired.
      const now = clock.now();
      const booking = await checkBooking(w, req, { orgId, slotTokenSecret, now });
      const { host } = booking;
      const planned = await withConference(conferencing, newMeeting(booking, newId("mtg_"), now));
      createdEventId = await calendar.createEvent(calendarEvent(planned, host));
      const meeting = { ...planned, calendarEventId: createdEventId };
      await w.insertMeeting(meeting);
      await w.insertAudit({
        meetingId: meeting.id,
        at: now,
        action: "booked",
        reason: null,
        previous: null,
        next: { start: meeting.start, end: meeting.end, hostUserId: host.userId },
      });
      const message = meetingMessage({ meeting, host }, now, bookingBaseUrl);
      await w.enqueue(meetingBookedEvent(message, now));
      return { meeting: message };
    });
  } catch (err) {
    if (createdEventId) await removeOrphanEvent(deps, createdEventId);
    throw err;
  }
}

/** Moves a scheduled meeting to the slot of a new token of its schedule, its calendar event with it. */
export function rescheduleMeeting<R>(
  deps: MeetingUseCaseDeps,
  cmd: { orgId: string; id: string; slotToken: string; reason: string },
  write: MeetingWrite<R>,
): Promise<R> {
  const { clock, slotTokenSecret, bookingBaseUrl, calendar } = deps;
  const { orgId, id, reason } = cmd;
  return write(async (w) => {
    const now = clock.now();
    const current = await w.lockMeeting(orgId, id);
    if (!current) throw meetingNotFound(id);
    const before = current.meeting;
    const status = meetingStatus(before, now);
    if (status !== "scheduled") {
      throw problem("meeting-not-reschedulable", `Meeting ${id} is ${status} and cannot be rescheduled.`);
    }
    const token = verifiedToken(cmd.slotToken, slotTokenSecret, orgId, now);
    if (token.scheduleId !== before.scheduleId) {
      throw problem("schedule-mismatch", "The slot token belongs to another schedule than the meeting.");
    }
    const schedule = await bookableSchedule(w, orgId, token.scheduleId);
    const slot = slotOf(token);
    const host = await hostOfFreeSlot(w, schedule, token.hostUserId, slot, now);
    const meeting: MeetingRecord = {
      ...before,
      hostUserId: host.userId,
      start: slot.start,
      end: slot.end,
      updatedAt: now,
      version: before.version + 1,
    };
    await w.updateMeeting(meeting);
    // After the update, so a slot conflict never touches the calendar; a failing provider rolls the move back.
    if (meeting.calendarEventId) await calendar.updateEvent(meeting.calendarEventId, calendarEvent(meeting, host));
    const previous = { start: before.start, end: before.end, hostUserId: before.hostUserId };
    await w.insertAudit({
      meetingId: id,
      at: now,
      action: "rescheduled",
      reason: reason === "" ? null : reason,
      previous,
      next: { start: meeting.start, end: meeting.end, hostUserId: meeting.hostUserId },
    });
    const message = meetingMessage({ meeting, host }, now, bookingBaseUrl);
    await w.enqueue(meetingRescheduledEvent(message, previous, reason, now));
    return { meeting: message };
  });
}

/**
 * Cancels a meeting and deletes its calendar event; true when it changed (false: it was
 * canceled already, and repeating a cancellation succeeds without a write or a second event).
 */
export async function cancelMeeting(
  deps: MeetingUseCaseDeps,
  store: Pick<Store, "tx">,
  cmd: { orgId: string; id: string; reason: string; sendNotifications: boolean },
): Promise<boolean> {
  const { clock, bookingBaseUrl, calendar } = deps;
  const { orgId, id, reason } = cmd;
  if ([...reason].length > MAX_CANCEL_REASON) {
    throw problem("invalid-field", `reason must be at most ${MAX_CANCEL_REASON} characters.`, { field: "reason" });
  }
  return store.tx(async (w) => {
    const now = clock.now();
    const current = await w.lockMeeting(orgId, id);
    if (!current) throw meetingNotFound(id);
    const before = current.meeting;
    const status = meetingStatus(before, now);
    // Repeating a cancellation succeeds and changes nothing: no write, no second event.
    if (status === "canceled") return false;
    if (status === "completed") throw problem("meeting-completed", `Meeting ${id} has already ended.`);
    const meeting: MeetingRecord = {
      ...before,
      canceledAt: now,
      cancelReason: reason === "" ? null : reason,
      updatedAt: now,
      version: before.version + 1,
    };
    await w.updateMeeting(meeting);
    if (meeting.calendarEventId) await calendar.deleteEvent(meeting.calendarEventId);
    await w.insertAudit({
      meetingId: id,
      at: now,
      action: "canceled",
      reason: meeting.cancelReason,
      previous: { start: before.start, end: before.end, hostUserId: before.hostUserId },
      next: null,
    });
    const message = meetingMessage({ meeting, host: current.host }, now, bookingBaseUrl);
    await w.enqueue(meetingCanceledEvent(message, reason, cmd.sendNotifications, now));
    return true;
  });
}
