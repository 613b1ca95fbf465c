// The scheduling data of the gateway's tests: Smart Schedules and meetings of ORG and CHILD_ORG.
import { create, fromJson } from "@bufbuild/protobuf";
import { type Timestamp, ValueSchema } from "@bufbuild/protobuf/wkt";
import { type Meeting, MeetingSchema, type SmartSchedule, SmartScheduleSchema } from "@platform/contracts/scheduling";
import { seededId } from "@platform/kit/ids";
import { type Init, ts } from "./common.js";
import { ADA, BEN, CHILD_ORG, ORG } from "./identity-data.js";

/** Smart Schedules: SCHEDULE (published, full detail), UNPUBLISHED and DISABLED of ORG, a draft, one of CHILD_ORG. */
export const SCHEDULE = seededId("sched_", "gw-test", "discovery");
export const UNPUBLISHED_SCHEDULE = seededId("sched_", "gw-test", "partner-intro");
export const DISABLED_SCHEDULE = seededId("sched_", "gw-test", "legacy-demo");
export const DRAFT_SCHEDULE = seededId("sched_", "gw-test", "draft");
export const CHILD_SCHEDULE = seededId("sched_", "gw-test", "child");

/**
 * Meetings of ORG: BOOKED (a Smart Schedule booking, in person), PLAIN (nothing optional
 * set), PAST (already over); and FOREIGN of CHILD_ORG.
 */
export const BOOKED_MEETING = seededId("mtg_", "gw-test", "booked");
export const PLAIN_MEETING = seededId("mtg_", "gw-test", "plain");
export const PAST_MEETING = seededId("mtg_", "gw-test", "past");
export const FOREIGN_MEETING = seededId("mtg_", "gw-test", "foreign");

/** The hosts of the meetings, as scheduling knows them. */
export const HOSTS: Record<string, { email: string; firstName: string; lastName: string; displayName: string }> = {
  [ADA]: { email: "ada@acme.example", firstName: "Ada", lastName: "Admin", displayName: "Ada Admin" },
  [BEN]: { email: "ben@acme.example", firstName: "Ben", lastName: "Baker", displayName: "Ben Baker" },
};

export interface StoredSchedule {
  id: string;
  orgId: string;
  createTime: Timestamp;
  schedule: SmartSchedule;
}

export function seedSchedules(): StoredSchedule[] {
  const stored = (orgId: string, created: string, init: Init<typeof SmartScheduleSchema>) => {
    const schedule = create(SmartScheduleSchema, {
      description: "",
      status: "active",
      durationMinutes: 30,
      bookingPeriods: [30],
      timeZone: "UTC",
      bookingWindow: { minAdvanceMinutes: 0, maxAdvanceDays: 30 },
      assignees: [{ userId: ADA, displayName: "Ada Admin" }],
      ...init,
    });
    return { id: schedule.id, orgId, createTime: ts(created), schedule };
  };
  return [
    stored(ORG, "2025-05-20T10:00:00Z", {
      id: SCHEDULE,
      name: "Discovery call",
      description: "A first call with sales",
      durationMinutes: 30,
      bookingPeriods: [30, 45],
      timeZone: "Europe/Berlin",
      publishTime: ts("2025-06-01T08:00:00Z"),
      updateTime: ts("2026-01-05T09:00:00Z"),
      bookingWindow: { minAdvanceMinutes: 120, maxAdvanceDays: 14 },
      matchingFormFields: [
        { key: "region", label: "Region", type: "select", options: ["emea", "amer"], required: true },
        { key: "seats", label: "Seats", type: "number", options: [], required: false },
      ],
      surveyQuestions: [
        { key: "what-would-you-like-to-discuss", label: "What would you like to discuss?", type: "long-text" },
      ],
      assignees: [
        { userId: ADA, displayName: "Ada Admin" },
        { userId: BEN, displayName: "Ben Baker" },
      ],
    }),
    stored(ORG, "2025-09-01T10:00:00Z", {
      id: UNPUBLISHED_SCHEDULE,
      name: "Partner intro",
      updateTime: ts("2026-01-08T09:00:00Z"),
    }),
    stored(ORG, "2025-03-01T10:00:00Z", {
      id: DISABLED_SCHEDULE,
      name: "Legacy demo",
      status: "disabled",
      publishTime: ts("2025-03-02T10:00:00Z"),
      updateTime: ts("2026-01-10T09:00:00Z"),
    }),
    stored(ORG, "2026-01-01T10:00:00Z", {
      id: DRAFT_SCHEDULE,
      name: "Draft",
      status: "draft",
      updateTime: ts("2026-01-12T09:00:00Z"),
    }),
    stored(CHILD_ORG, "2025-04-01T10:00:00Z", {
      id: CHILD_SCHEDULE,
      name: "Child schedule",
      publishTime: ts("2025-04-01T10:00:00Z"),
      updateTime: ts("2025-04-01T10:00:00Z"),
    }),
  ];
}

export function seedMeetings(): Meeting[] {
  const meeting = (init: Init<typeof MeetingSchema>) =>
    create(MeetingSchema, {
      orgId: ORG,
      host: { userId: ADA, ...HOSTS[ADA] },
      attendee: { email: "pat@customer.example", firstName: "Pat", lastName: "Lee" },
      title: "Discovery call with Pat Lee",
      timeZone: "Europe/Berlin",
      status: "scheduled",
      createTime: ts("2026-01-12T08:00:00Z"),
      updateTime: ts("2026-01-12T08:00:00Z"),
      ...init,
    });
  return [
    meeting({
      id: BOOKED_MEETING,
      attendee: {
        email: "pat@customer.example",
        firstName: "Pat",
        lastName: "Lee",
        phone: "+14155550100",
        timeZone: "America/New_York",
      },
      additionalAttendees: ["sam@customer.example"],
      startTime: ts("2026-01-22T10:00:00Z"),
      endTime: ts("2026-01-22T10:30:00Z"),
      location: { type: "in-person", address: "1 Main St, Springfield" },
      calendarEventId: "evt-booked",
      updateTime: ts("2026-01-13T08:00:00Z"),
      smartScheduling: {
        scheduleId: SCHEDULE,
        formValues: [
          { key: "region", answer: fromJson(ValueSchema, "emea") },
          { key: "seats", answer: fromJson(ValueSchema, 40) },
          { key: "products", answer: fromJson(ValueSchema, ["crm", "voice"]) },
          { key: "existingCustomer", answer: fromJson(ValueSchema, false) },
        ],
        surveyResponses: [{ question: "What would you like to discuss?", answer: "Pricing" }],
        rescheduleUrl: `https://book.example/r/${BOOKED_MEETING}`,
        cancelUrl: `https://book.example/c/${BOOKED_MEETING}`,
        campaign: { source: "newsletter" },
      },
    }),
    meeting({
      id: PLAIN_MEETING,
      startTime: ts("2026-01-20T15:00:00Z"),
      endTime: ts("2026-01-20T15:30:00Z"),
    }),
    meeting({
      id: PAST_MEETING,
      startTime: ts("2026-01-10T09:00:00Z"),
      endTime: ts("2026-01-10T09:30:00Z"),
      createTime: ts("2026-01-02T08:00:00Z"),
      updateTime: ts("2026-01-02T08:00:00Z"),
      smartScheduling: {
        scheduleId: SCHEDULE,
        rescheduleUrl: "https://book.example/r",
        cancelUrl: "https://book.example/c",
      },
    }),
    meeting({
      id: FOREIGN_MEETING,
      orgId: CHILD_ORG,
      startTime: ts("2026-01-21T15:00:00Z"),
      endTime: ts("2026-01-21T15:30:00Z"),
    }),
  ];
}
