import type { ServiceImpl } from "@connectrpc/connect";
import { MeetingService } from "@platform/contracts/scheduling";
import { apiContext } from "@platform/kit/connect";
import { newId, parseId } from "@platform/kit/ids";
import type { Logger } from "@platform/kit/logger";
import { problem } from "@platform/kit/problems";
import {
  bookableSchedule,
  checkBooking,
  hostOfFreeSlot,
  newMeeting,
  slotOf,
  verifiedToken,
} from "../application/booking.js";
import {
  type CalendarEventInput,
  type CalendarProvider,
  type ConferencingProvider,
  withConference,
} from "../application/providers.js";
import { idempotentWrite, type WriteDeps } from "../application/write.js";
import type { HostRecord, MeetingRecord } from "../domain/model.js";
import { meetingStatus } from "../domain/status.js";
import { meetingBookedEvent, meetingCanceledEvent, meetingRescheduledEvent } from "../events/outbox-events.js";
import { meetingMessage } from "../messages.js";
import type { Store } from "../store/index.js";

const MAX_CANCEL_REASON = 500;

const notFound = (id: string) => problem("meeting-not-found", `Meeting ${id} was not found.`);

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

export interface MeetingDeps extends WriteDeps {
  store: Store;
  logger: Logger;
  slotTokenSecret: string;
  bookingBaseUrl: string;
  calendar: CalendarProvider;
  conferencing: ConferencingProvider;
}

/** Booking, reading, rescheduling and canceling meetings of the caller's org. */
export function meetingHandlers(deps: MeetingDeps): ServiceImpl<typeof MeetingService> {
  const { store, clock, logger, slotTokenSecret, bookingBaseUrl, calendar, conferencing } = deps;

  /** Undoes a calendar event whose meeting was not stored; failing that, it is logged for clean-up. */
  const removeOrphanEvent = (eventId: string) =>
    calendar.deleteEvent(eventId).catch((err: unknown) => {
      logger.error({ err, calendarEventId: eventId }, "calendar event of a failed booking could not be removed");
    });

  return {
    async bookMeeting(req, ctx) {
      const { orgId } = apiContext(ctx);
      // Set once the provider holds an event: any failure after that, the commit included, removes it.
      let createdEventId: string | undefined;
      try {
        return await idempotentWrite(deps, ctx, MeetingService.method.bookMeeting, req, async (w) => {
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
        if (createdEventId) await removeOrphanEvent(createdEventId);
        throw err;
      }
    },

    async getMeeting(req, ctx) {
      const { orgId } = apiContext(ctx);
      const id = parseId("mtg_", req.meetingId, "meetingId");
      const found = await store.findMeeting(orgId, id);
      if (!found) throw notFound(id);
      return { meeting: meetingMessage(found, clock.now(), bookingBaseUrl) };
    },

    async rescheduleMeeting(req, ctx) {
      const { orgId } = apiContext(ctx);
      const id = parseId("mtg_", req.meetingId, "meetingId");
      return idempotentWrite(deps, ctx, MeetingService.method.rescheduleMeeting, req, async (w) => {
        const now = clock.now();
        const current = await w.lockMeeting(orgId, id);
        if (!current) throw notFound(id);
        const before = current.meeting;
        const status = meetingStatus(before, now);
        if (status !== "scheduled") {
          throw problem("meeting-not-reschedulable", `Meeting ${id} is ${status} and cannot be rescheduled.`);
        }
        const token = verifiedToken(req.slotToken, slotTokenSecret, orgId, now);
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
          reason: req.reason === "" ? null : req.reason,
          previous,
          next: { start: meeting.start, end: meeting.end, hostUserId: meeting.hostUserId },
        });
        const message = meetingMessage({ meeting, host }, now, bookingBaseUrl);
        await w.enqueue(meetingRescheduledEvent(message, previous, req.reason, now));
        return { meeting: message };
      });
    },

    async cancelMeeting(req, ctx) {
      const { orgId } = apiContext(ctx);
      const id = parseId("mtg_", req.meetingId, "meetingId");
      if ([...req.reason].length > MAX_CANCEL_REASON) {
        throw problem("invalid-field", `reason must be at most ${MAX_CANCEL_REASON} characters.`, { field: "reason" });
      }
      const changed = await store.tx(async (w) => {
        const now = clock.now();
        const current = await w.lockMeeting(orgId, id);
        if (!current) throw notFound(id);
        const before = current.meeting;
        const status = meetingStatus(before, now);
        // Repeating a cancellation succeeds and changes nothing: no write, no second event.
        if (status === "canceled") return false;
        if (status === "completed") throw problem("meeting-completed", `Meeting ${id} has already ended.`);
        const meeting: MeetingRecord = {
          ...before,
          canceledAt: now,
          cancelReason: req.reason === "" ? null : req.reason,
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
        await w.enqueue(meetingCanceledEvent(message, req.reason, req.sendNotifications, now));
        return true;
      });
      if (changed) deps.committed();
      return {};
    },
  };
}
