// Scheduling as the gateway sees it (SmartScheduleService, MeetingService), in memory over the
// data of scheduling-data.ts.
import { clone, create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate, type Value } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import {
  type Attendee,
  type Meeting,
  MeetingHostSchema,
  MeetingSchema,
  MeetingService,
  type SmartSchedule,
  SmartScheduleService,
} from "@platform/contracts/scheduling";
import { newId } from "@platform/kit/ids";
import { problem } from "@platform/kit/problems";
import { EMAIL, FakeService, millis, type SortKeys, ts } from "./common.js";
import { ADA, BEN, ORG } from "./identity-data.js";
import { HOSTS, SCHEDULE, type StoredSchedule, seedMeetings, seedSchedules } from "./scheduling-data.js";

/** What the fake's slot tokens carry (the real ones are signed; these are only encoded). */
export interface FakeSlot {
  orgId: string;
  scheduleId: string;
  hostUserId: string;
  start: string;
  end: string;
  preview: boolean;
  issuedAt: string;
}

const TOKEN_PREFIX = "fake-slot.";
const SLOT_TOKEN_LIFETIME_MS = 10 * 60_000;
const E164 = /^\+[1-9]\d{1,14}$/;
const SCHEDULE_SORT: SortKeys<StoredSchedule> = {
  updatedAt: (s) => millis(s.schedule.updateTime),
  createdAt: (s) => millis(s.createTime),
  name: (s) => s.schedule.name,
};

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * Scheduling as the gateway sees it: SmartScheduleService and MeetingService in memory,
 * behind the real trust interceptor. It judges what the real service judges (filters,
 * durations, form values, attendee values, slot tokens, conflicts, meeting states), so the
 * gateway's pass-through of those problems is tested, and it replays Idempotency-Keys.
 */
export class FakeScheduling extends FakeService {
  readonly schedules = new Map(seedSchedules().map((s) => [s.id, s]));
  readonly meetings = new Map(seedMeetings().map((m) => [m.id, m]));
  readonly canceled = new Set<string>();

  /** A slot token as availability would issue it now; `overrides` make bad ones. */
  slotToken(overrides: Partial<FakeSlot> = {}): string {
    const slot: FakeSlot = {
      orgId: ORG,
      scheduleId: SCHEDULE,
      hostUserId: ADA,
      start: "2026-01-16T09:00:00.000Z",
      end: "2026-01-16T09:30:00.000Z",
      preview: false,
      issuedAt: this.clock.now().toISOString(),
      ...overrides,
    };
    return TOKEN_PREFIX + Buffer.from(JSON.stringify(slot)).toString("base64url");
  }

  routes = (router: ConnectRouter) => {
    router.service(SmartScheduleService, {
      listSmartSchedules: async (req, ctx) => {
        const c = this.call(ctx, "listSmartSchedules", req);
        if (!["", "active", "all"].includes(req.status)) {
          throw problem("invalid-filter", "status must be active or all.", { field: "status" });
        }
        const statuses = req.status === "all" ? ["active", "disabled"] : ["active"];
        const rows = [...this.schedules.values()].filter(
          (s) =>
            s.orgId === c.orgId &&
            statuses.includes(s.schedule.status) &&
            s.schedule.name.toLowerCase().includes(req.name.toLowerCase()),
        );
        const page = this.page(rows, req, SCHEDULE_SORT);
        return { schedules: page.items.map((s) => s.schedule), nextCursor: page.nextCursor };
      },
      getSmartSchedule: async (req, ctx) => {
        const c = this.call(ctx, "getSmartSchedule", req);
        return { schedule: this.#schedule(req.scheduleId, c.orgId) };
      },
      getAvailability: async (req, ctx) => {
        const c = this.call(ctx, "getAvailability", req);
        const schedule = this.#schedule(req.scheduleId, c.orgId);
        if (schedule.status !== "active") throw problem("schedule-unavailable", "The schedule is disabled.");
        const duration = req.durationMinutes ?? schedule.durationMinutes;
        if (!schedule.bookingPeriods.includes(duration)) {
          throw problem("availability-request-invalid", `durationMinutes must be one of ${schedule.bookingPeriods}.`, {
            field: "durationMinutes",
          });
        }
        this.#checkForm(schedule, req.formValues);
        const from = req.rangeStart ? timestampDate(req.rangeStart) : new Date("2026-01-16T09:00:00Z");
        const slots = (hostUserId: string) =>
          [0, 60].map((offset) => {
            const start = new Date(from.getTime() + offset * 60_000);
            const end = new Date(start.getTime() + duration * 60_000);
            return {
              startTime: timestampFromDate(start),
              endTime: timestampFromDate(end),
              slotToken: this.slotToken({
                orgId: c.orgId,
                scheduleId: schedule.id,
                hostUserId,
                start: start.toISOString(),
                end: end.toISOString(),
                preview: req.preview,
              }),
            };
          });
        const host = (id: string) => ({ host: { userId: id, displayName: HOSTS[id]!.displayName }, slots: slots(id) });
        return {
          hostGroups: [{ hosts: [host(ADA)] }, { hosts: [host(BEN)] }],
          matchTime: timestampFromDate(this.clock.now()),
        };
      },
    });
    router.service(MeetingService, {
      bookMeeting: async (req, ctx) => {
        return this.write(ctx, "bookMeeting", req, (c) => {
          const slot = this.#slot(req.slotToken, c.orgId);
          const schedule = this.#schedule(slot.scheduleId, c.orgId);
          this.#checkForm(schedule, req.formValues, this.#attendeeErrors(req.attendee));
          const questions = schedule.surveyQuestions.map((q) => q.label);
          const unknown = Object.keys(req.surveyResponses).find((q) => !questions.includes(q));
          if (unknown !== undefined) {
            throw problem("booking-validation-failed", `The schedule has no survey question '${unknown}'.`);
          }
          this.#checkFree(slot);
          const id = newId("mtg_");
          const now = timestampFromDate(this.clock.now());
          const meeting = create(MeetingSchema, {
            id,
            orgId: c.orgId,
            host: { userId: slot.hostUserId, ...HOSTS[slot.hostUserId] },
            attendee: req.attendee,
            additionalAttendees: req.additionalAttendees,
            title: `${schedule.name} with ${req.attendee?.firstName} ${req.attendee?.lastName}`,
            startTime: ts(slot.start),
            endTime: ts(slot.end),
            timeZone: schedule.timeZone,
            location: { type: "video", provider: "video_a", joinUrl: `https://video-a.example/j/${id}` },
            conferencing: { provider: "video_a", providerMeetingId: `va-${id}` },
            calendarEventId: `evt-${id}`,
            status: "scheduled",
            createTime: now,
            updateTime: now,
            smartScheduling: {
              scheduleId: schedule.id,
              formValues: Object.entries(req.formValues).map(([key, answer]) => ({ key, answer })),
              surveyResponses: Object.entries(req.surveyResponses).map(([question, answer]) => ({ question, answer })),
              rescheduleUrl: `https://book.example/r/${id}`,
              cancelUrl: `https://book.example/c/${id}`,
              campaign: req.campaign,
              preview: slot.preview,
            },
          });
          this.meetings.set(id, meeting);
          return { meeting };
        });
      },
      getMeeting: async (req, ctx) => {
        const c = this.call(ctx, "getMeeting", req);
        return { meeting: this.#withStatus(this.#meeting(req.meetingId, c.orgId)) };
      },
      rescheduleMeeting: async (req, ctx) => {
        return this.write(ctx, "rescheduleMeeting", req, (c) => {
          const meeting = this.#withStatus(this.#meeting(req.meetingId, c.orgId));
          if (meeting.status !== "scheduled") {
            throw problem("meeting-not-reschedulable", `The meeting is ${meeting.status}.`);
          }
          const slot = this.#slot(req.slotToken, c.orgId);
          if (slot.scheduleId !== meeting.smartScheduling?.scheduleId) {
            throw problem("schedule-mismatch", "The slot token is of another schedule.");
          }
          this.#checkFree(slot, meeting.id);
          const moved = clone(MeetingSchema, meeting);
          moved.host = create(MeetingHostSchema, { userId: slot.hostUserId, ...HOSTS[slot.hostUserId] });
          moved.startTime = ts(slot.start);
          moved.endTime = ts(slot.end);
          moved.updateTime = timestampFromDate(this.clock.now());
          this.meetings.set(moved.id, moved);
          return { meeting: moved };
        });
      },
      cancelMeeting: async (req, ctx) => {
        const c = this.call(ctx, "cancelMeeting", req);
        const meeting = this.#withStatus(this.#meeting(req.meetingId, c.orgId));
        if (meeting.status === "completed") throw problem("meeting-completed", "The meeting is over.");
        if (meeting.status === "scheduled") {
          this.canceled.add(meeting.id);
          this.meetings.set(meeting.id, { ...meeting, updateTime: timestampFromDate(this.clock.now()) });
        }
        return {};
      },
    });
  };

  #schedule(id: string, orgId: string): SmartSchedule {
    const stored = this.schedules.get(id);
    if (!stored || stored.orgId !== orgId || stored.schedule.status === "draft") {
      throw problem("schedule-not-found", "No such schedule.");
    }
    return stored.schedule;
  }

  #meeting(id: string, orgId: string): Meeting {
    return this.owned(this.meetings.get(id), orgId, "meeting-not-found", "No such meeting.");
  }

  /** The status derives from the cancellation and the clock, as the spec's states say. */
  #withStatus(m: Meeting): Meeting {
    const status = this.canceled.has(m.id)
      ? "canceled"
      : millis(m.endTime) <= this.clock.now().getTime()
        ? "completed"
        : "scheduled";
    return { ...m, status };
  }

  #slot(token: string, orgId: string): FakeSlot {
    let slot: FakeSlot;
    try {
      if (!token.startsWith(TOKEN_PREFIX)) throw new Error("not a fake token");
      slot = JSON.parse(Buffer.from(token.slice(TOKEN_PREFIX.length), "base64url").toString()) as FakeSlot;
    } catch {
      throw problem("slot-token-invalid", "The slot token is not valid.");
    }
    if (slot.orgId !== orgId) throw problem("slot-token-invalid", "The slot token is not valid.");
    if (this.clock.now().getTime() - Date.parse(slot.issuedAt) > SLOT_TOKEN_LIFETIME_MS) {
      throw problem("slot-token-expired", "The slot token is older than 10 minutes.");
    }
    return slot;
  }

  #checkFree(slot: FakeSlot, except?: string): void {
    const [start, end] = [Date.parse(slot.start), Date.parse(slot.end)];
    const taken = [...this.meetings.values()].some(
      (m) =>
        m.id !== except &&
        m.host?.userId === slot.hostUserId &&
        !this.canceled.has(m.id) &&
        millis(m.startTime) < end &&
        millis(m.endTime) > start,
    );
    if (taken) throw problem("slot-conflict", "The slot was just taken.", { rerunAvailability: true });
  }

  #attendeeErrors(attendee: Attendee | undefined): { field: string; message: string }[] {
    const errors: { field: string; message: string }[] = [];
    if (!EMAIL.test(attendee?.email ?? "")) errors.push({ field: "attendee.email", message: "Not a valid email." });
    if (attendee?.phone !== undefined && !E164.test(attendee.phone)) {
      errors.push({ field: "attendee.phone", message: "Not an E.164 number." });
    }
    if (attendee?.timeZone !== undefined && !isTimeZone(attendee.timeZone)) {
      errors.push({ field: "attendee.timeZone", message: "Not an IANA time zone." });
    }
    return errors;
  }

  /** Required fields answered and select answers among the options; else 422 form-validation. */
  #checkForm(
    schedule: SmartSchedule,
    values: Record<string, Value>,
    errors: { field: string; message: string }[] = [],
  ) {
    for (const field of schedule.matchingFormFields) {
      const value = values[field.key]?.kind;
      if (!value) {
        if (field.required) errors.push({ field: `formValues.${field.key}`, message: "Required." });
      } else if (field.type === "select" && !(value.case === "stringValue" && field.options.includes(value.value))) {
        errors.push({ field: `formValues.${field.key}`, message: `One of ${field.options.join(", ")}.` });
      }
    }
    if (errors.length > 0) throw problem("form-validation", "Some fields are invalid.", { fieldErrors: errors });
  }
}
