import { timestampDate } from "@bufbuild/protobuf/wkt";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import { newId } from "@platform/kit/ids";
import { describe, expect, it } from "vitest";
import { simulatedRoom } from "../src/application/providers.js";
import { txStore } from "../src/store/index.js";
import {
  acme,
  ada,
  booking,
  MINUTE,
  meetingCount,
  meetings,
  other,
  schedule,
  t,
  tokenFor,
  useBookingWorld,
} from "./booking-fixture.js";
import {
  anAttendee,
  BOOKING_BASE_URL,
  formValues,
  givenSchedule,
  outboxRows,
  problemDetailOf,
  problemOf,
  withHeaders,
} from "./builders.js";

useBookingWorld();

describe("BookMeeting", () => {
  it("books the token's slot and answers the canonical meeting", async () => {
    const values = { products: ["voice", "crm"], region: "EMEA" };
    const { meeting } = await meetings().bookMeeting(
      booking(await tokenFor({ values }), {
        attendee: anAttendee({ phone: "+14155550123", timeZone: "Europe/London" }),
        additionalAttendees: ["charles@analytical.example"],
        formValues: formValues(values),
        surveyResponses: { "Anything else?": "No", "What would you like to discuss?": "Pricing" },
      }),
    );
    const id = meeting?.id ?? "";
    expect(id).toMatch(/^mtg_/);
    const room = simulatedRoom("video_a", id);
    const createEvent = t.calendar.calls.find((c) => c.op === "create");
    expect(meeting).toMatchObject({
      orgId: acme,
      host: { userId: ada.userId, email: ada.email, firstName: "Ada", lastName: "Host", displayName: "Ada Host" },
      attendee: {
        email: "ada@analytical.example",
        firstName: "Ada",
        lastName: "Lovelace",
        phone: "+14155550123",
        timeZone: "Europe/London",
      },
      additionalAttendees: ["charles@analytical.example"],
      title: "Intro call: Ada Lovelace",
      timeZone: "America/New_York",
      location: { type: "video", provider: "video_a", joinUrl: room.joinUrl },
      conferencing: { provider: "video_a", providerMeetingId: room.providerMeetingId },
      calendarEventId: createEvent?.eventId,
      status: "scheduled",
      smartScheduling: {
        scheduleId: schedule.id,
        // The form's field order and the survey's question order, whatever the request's order.
        formValues: [
          { key: "region", answer: { kind: { case: "stringValue", value: "EMEA" } } },
          { key: "products", answer: { kind: { case: "listValue" } } },
        ],
        surveyResponses: [
          { question: "What would you like to discuss?", answer: "Pricing" },
          { question: "Anything else?", answer: "No" },
        ],
        rescheduleUrl: `${BOOKING_BASE_URL}/meetings/${id}/reschedule`,
        cancelUrl: `${BOOKING_BASE_URL}/meetings/${id}/cancel`,
        preview: false,
      },
    });
    expect(meeting?.smartScheduling?.campaign).toBeUndefined();
    expect(meeting?.startTime && timestampDate(meeting.startTime)).toEqual(new Date("2026-01-16T09:00:00Z"));
    expect(meeting?.endTime && timestampDate(meeting.endTime)).toEqual(new Date("2026-01-16T09:30:00Z"));
    expect(meeting?.createTime && timestampDate(meeting.createTime)).toEqual(t.clock.now());
    expect(createEvent?.event).toMatchObject({
      meetingId: id,
      hostEmail: ada.email,
      attendeeEmails: ["ada@analytical.example", "charles@analytical.example"],
      where: room.joinUrl,
    });

    const rows = await outboxRows(t.db);
    expect(rows).toMatchObject([{ type: EVENT_TYPES.meetingBooked, key: acme, subject: id }]);
    expect(rows[0]?.data).toMatchObject({
      meeting: { id, status: "scheduled", smartScheduling: { scheduleId: schedule.id } },
    });
    const topics = await t.db.query<{ topic: string }>("SELECT topic FROM scheduling.outbox");
    expect(topics).toEqual([{ topic: TOPICS.scheduling }]);
    const audit = await t.db.query(
      "SELECT action, new_host_user_id FROM scheduling.meeting_audit WHERE meeting_id = $1",
      [id],
    );
    expect(audit).toEqual([{ action: "booked", new_host_user_id: ada.userId }]);
    expect(t.commits()).toBe(1);
  });

  it("replays the stored meeting for a repeated Idempotency-Key, even after the token expired", async () => {
    const request = booking(await tokenFor());
    const first = await withHeaders((o) => meetings(acme, { idempotencyKey: "book-1" }).bookMeeting(request, o));
    expect(first.headers.get("x-idempotent-replay")).toBeNull();
    t.clock.advance(30 * MINUTE);
    const again = await withHeaders((o) => meetings(acme, { idempotencyKey: "book-1" }).bookMeeting(request, o));
    expect(again.headers.get("x-idempotent-replay")).toBe("true");
    expect(again.response.meeting?.id).toBe(first.response.meeting?.id);
    expect(await meetingCount()).toBe(1);
    expect(await outboxRows(t.db)).toHaveLength(1);

    const changed = meetings(acme, { idempotencyKey: "book-1" }).bookMeeting({
      ...request,
      attendee: anAttendee({ firstName: "Eve" }),
    });
    expect(await problemOf(changed)).toBe("idempotency-key-conflict");
    expect(await problemOf(meetings(acme, { noIdempotencyKey: true }).bookMeeting(request))).toBe(
      "idempotency-key-required",
    );
  });

  it("lets the exclusion constraint refuse a second booking of the slot, and removes its calendar event", async () => {
    const token = await tokenFor();
    await meetings().bookMeeting(booking(token));
    const conflict = await problemDetailOf(meetings().bookMeeting(booking(token)));
    expect(conflict).toMatchObject({ name: "slot-conflict", extensions: { rerunAvailability: true } });
    expect(t.calendar.calls.map((c) => c.op)).toEqual(["create", "create", "delete"]);
    expect(t.calendar.calls[2]?.eventId).toBe(t.calendar.calls[1]?.eventId);
    expect(await meetingCount()).toBe(1);
    expect(await outboxRows(t.db)).toHaveLength(1);
  });

  it("answers slot-conflict when the slot left the booking window or the host became busy or unassigned", async () => {
    // 13:00 is the first bookable slot at 12:00 with an hour's notice; five minutes later it is not.
    const early = await tokenFor({ start: "2026-01-15T13:00:00Z" });
    const late = await tokenFor({ start: "2026-01-16T15:00:00Z" });
    const later = await tokenFor({ start: "2026-01-16T16:00:00Z" });
    t.clock.advance(5 * MINUTE);
    expect(await problemDetailOf(meetings().bookMeeting(booking(early)))).toMatchObject({
      name: "slot-conflict",
      extensions: { rerunAvailability: true },
    });
    await txStore(t.db).insertBusyBlock({
      id: "busy_x",
      userId: ada.userId,
      start: new Date("2026-01-16T15:20:00Z"),
      end: new Date("2026-01-16T15:40:00Z"),
    });
    expect(await problemDetailOf(meetings().bookMeeting(booking(late)))).toMatchObject({
      name: "slot-conflict",
      extensions: { rerunAvailability: true },
    });
    await t.db.query("DELETE FROM scheduling.schedule_hosts WHERE schedule_id = $1", [schedule.id]);
    expect(await problemOf(meetings().bookMeeting(booking(later)))).toBe("slot-conflict");
    expect(t.calendar.calls).toEqual([]);
  });

  it("books a preview token like any other, calendar event included, and publishes it flagged", async () => {
    const { meeting } = await meetings().bookMeeting(booking(await tokenFor({ preview: true })));
    expect(meeting?.smartScheduling?.preview).toBe(true);
    expect(meeting?.calendarEventId).toBe(t.calendar.calls[0]?.eventId);
    const [row] = await outboxRows(t.db);
    expect(row).toMatchObject({
      type: EVENT_TYPES.meetingBooked,
      data: { meeting: { smartScheduling: { preview: true } } },
    });
  });

  it("keeps the campaign's UTM parameters, empty ones as absent, and none at all as no campaign", async () => {
    const token = await tokenFor();
    const { meeting } = await meetings().bookMeeting(
      booking(token, { campaign: { source: "newsletter", medium: "" } }),
    );
    expect(meeting?.smartScheduling?.campaign).toMatchObject({ source: "newsletter" });
    expect(meeting?.smartScheduling?.campaign?.medium).toBeUndefined();
    expect(meeting?.smartScheduling?.campaign?.id).toBeUndefined();
    const bare = await meetings().bookMeeting(
      booking(await tokenFor({ start: "2026-01-16T12:00:00Z" }), { campaign: {} }),
    );
    expect(bare.meeting?.smartScheduling?.campaign).toBeUndefined();
  });

  it("stores nothing when the calendar provider fails, so the same key can try again", async () => {
    const request = booking(await tokenFor());
    t.calendar.failNext.add("create");
    expect(await problemOf(meetings(acme, { idempotencyKey: "retry" }).bookMeeting(request))).toBe("connect:Internal");
    expect(await meetingCount()).toBe(0);
    const retried = await withHeaders((o) => meetings(acme, { idempotencyKey: "retry" }).bookMeeting(request, o));
    expect(retried.headers.get("x-idempotent-replay")).toBeNull();
    expect(await meetingCount()).toBe(1);
  });

  it("takes the location from the schedule, with a conference only for video", async () => {
    const phone = await givenSchedule(t.db, acme, [ada], {
      location: { type: "phone", provider: null, joinUrl: null, address: "+12025550199" },
    });
    const { meeting } = await meetings().bookMeeting(booking(await tokenFor({ scheduleId: phone.id })));
    expect(meeting?.location).toMatchObject({ type: "phone", address: "+12025550199" });
    expect(meeting?.location?.provider).toBeUndefined();
    expect(meeting?.conferencing).toBeUndefined();
  });
});

describe("GetMeeting", () => {
  it("returns the meeting with its status derived from the clock", async () => {
    const { meeting } = await meetings().bookMeeting(booking(await tokenFor()));
    const id = meeting?.id ?? "";
    const read = await meetings().getMeeting({ meetingId: id });
    expect(read.meeting).toEqual(meeting);
    t.clock.set("2026-01-16T09:30:00Z");
    expect((await meetings().getMeeting({ meetingId: id })).meeting?.status).toBe("completed");
  });

  it("hides other organizations' meetings and unknown ids alike", async () => {
    const { meeting } = await meetings().bookMeeting(booking(await tokenFor()));
    expect(await problemOf(meetings(other).getMeeting({ meetingId: meeting?.id ?? "" }))).toBe("meeting-not-found");
    expect(await problemOf(meetings().getMeeting({ meetingId: newId("mtg_") }))).toBe("meeting-not-found");
    expect(await problemOf(meetings().getMeeting({ meetingId: "sched_nope" }))).toBe("invalid-resource-id");
  });
});
