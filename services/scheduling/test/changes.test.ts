import type { JsonValue } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Meeting, MeetingService, SmartScheduleService } from "@platform/contracts/scheduling";
import { EVENT_TYPES } from "@platform/kit/events";
import { newId } from "@platform/kit/ids";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { formValuesHash } from "../src/domain/form.js";
import type { HostRecord, ScheduleRecord } from "../src/domain/model.js";
import { signSlotToken } from "../src/domain/slot-token.js";
import {
  anAttendee,
  type CallerOptions,
  createTestScheduling,
  formValues,
  givenHost,
  givenSchedule,
  outboxRows,
  problemDetailOf,
  problemOf,
  SLOT_TOKEN_SECRET,
  SURVEY,
  type TestScheduling,
  withHeaders,
} from "./builders.js";

let t: TestScheduling;
const acme = newId("org_");
const other = newId("org_");
let ada: HostRecord;
let bob: HostRecord;
let schedule: ScheduleRecord;
let meeting: Meeting;

const MINUTE = 60_000;
const meetings = (orgId = acme, opts: CallerOptions = {}) => t.caller(MeetingService, orgId, opts);

/** A slot token from availability: `host`'s slot starting at `start`. */
async function tokenFor(
  host: HostRecord,
  start: string,
  opts: { values?: Record<string, JsonValue>; orgId?: string; scheduleId?: string } = {},
): Promise<string> {
  const from = new Date(start);
  const res = await t.caller(SmartScheduleService, opts.orgId ?? acme).getAvailability({
    scheduleId: opts.scheduleId ?? schedule.id,
    formValues: formValues(opts.values ?? { region: "AMER" }),
    rangeStart: timestampFromDate(from),
    rangeEnd: timestampFromDate(new Date(from.getTime() + 30 * MINUTE)),
  });
  const token = res.hostGroups.flatMap((g) => g.hosts).find((h) => h.host?.userId === host.userId)?.slots[0]?.slotToken;
  if (!token) throw new Error(`no slot of ${host.displayName} at ${start}`);
  return token;
}

async function book(host: HostRecord, start: string): Promise<Meeting> {
  const res = await meetings().bookMeeting({
    slotToken: await tokenFor(host, start),
    attendee: anAttendee({ phone: "+14155550123" }),
    formValues: formValues({ region: "AMER" }),
    surveyResponses: SURVEY,
  });
  if (!res.meeting) throw new Error("no meeting");
  return res.meeting;
}

const stored = async (id: string) =>
  (
    await t.db.query<{ version: number; start_time: Date; host_user_id: string; canceled_at: Date | null }>(
      "SELECT version, start_time, host_user_id, canceled_at FROM scheduling.meetings WHERE id = $1",
      [id],
    )
  )[0];

const audit = (id: string) =>
  t.db.query(
    "SELECT action, reason, previous_host_user_id, new_host_user_id FROM scheduling.meeting_audit WHERE meeting_id = $1 ORDER BY id",
    [id],
  );

beforeAll(async () => {
  t = await createTestScheduling();
});
afterAll(() => t.close());
beforeEach(async () => {
  await t.reset();
  ada = await givenHost(t.db, acme, { displayName: "Ada" });
  bob = await givenHost(t.db, acme, { displayName: "Bob" });
  schedule = await givenSchedule(t.db, acme, [ada, bob]);
  meeting = await book(ada, "2026-01-16T09:00:00Z");
  t.calendar.calls.length = 0;
  await t.db.exec("DELETE FROM scheduling.outbox");
});

describe("RescheduleMeeting", () => {
  it("moves the meeting to another host's slot, keeping its id and creation time", async () => {
    const token = await tokenFor(bob, "2026-01-16T10:00:00Z");
    t.clock.advance(2 * MINUTE);
    const { meeting: moved } = await meetings().rescheduleMeeting({
      meetingId: meeting.id,
      slotToken: token,
      reason: "Ada is out",
    });
    expect(moved).toMatchObject({
      id: meeting.id,
      host: { userId: bob.userId },
      status: "scheduled",
      title: meeting.title,
    });
    expect(moved?.attendee).toEqual(meeting.attendee);
    expect(moved?.createTime).toEqual(meeting.createTime);
    expect(moved?.updateTime && timestampDate(moved.updateTime)).toEqual(t.clock.now());
    expect(moved?.startTime && timestampDate(moved.startTime)).toEqual(new Date("2026-01-16T10:00:00Z"));
    expect(await stored(meeting.id)).toMatchObject({ version: 2, host_user_id: bob.userId });
    expect(t.calendar.calls).toMatchObject([
      { op: "update", eventId: meeting.calendarEventId, event: { hostUserId: bob.userId } },
    ]);
    expect(await audit(meeting.id)).toEqual([
      { action: "booked", reason: null, previous_host_user_id: null, new_host_user_id: ada.userId },
      { action: "rescheduled", reason: "Ada is out", previous_host_user_id: ada.userId, new_host_user_id: bob.userId },
    ]);
    const [event] = await outboxRows(t.db);
    expect(event).toMatchObject({
      type: EVENT_TYPES.meetingRescheduled,
      subject: meeting.id,
      data: {
        meeting: { id: meeting.id, host: { userId: bob.userId } },
        reason: "Ada is out",
        previousStartTime: "2026-01-16T09:00:00Z",
        previousEndTime: "2026-01-16T09:30:00Z",
        previousHostUserId: ada.userId,
      },
    });
  });

  it("may move a meeting onto time overlapping its own", async () => {
    const longer = signSlotToken(
      {
        orgId: acme,
        scheduleId: schedule.id,
        hostUserId: ada.userId,
        start: new Date("2026-01-16T09:00:00.000Z"),
        durationMinutes: 60,
        expiresAt: new Date(t.clock.now().getTime() + 10 * MINUTE),
        preview: false,
        formValuesHash: formValuesHash({ region: "AMER" }),
      },
      SLOT_TOKEN_SECRET,
    );
    const { meeting: moved } = await meetings().rescheduleMeeting({ meetingId: meeting.id, slotToken: longer });
    expect(moved?.endTime && timestampDate(moved.endTime)).toEqual(new Date("2026-01-16T10:00:00Z"));
  });

  it("replays a repeated Idempotency-Key", async () => {
    const request = { meetingId: meeting.id, slotToken: await tokenFor(bob, "2026-01-16T10:00:00Z"), reason: "" };
    const first = await meetings(acme, { idempotencyKey: "move" }).rescheduleMeeting(request);
    const again = await withHeaders((o) => meetings(acme, { idempotencyKey: "move" }).rescheduleMeeting(request, o));
    expect(again.headers.get("x-idempotent-replay")).toBe("true");
    expect(again.response).toEqual(first);
    expect(await outboxRows(t.db)).toHaveLength(1);
    expect(await stored(meeting.id)).toMatchObject({ version: 2 });
  });

  it("refuses canceled and completed meetings", async () => {
    const token = await tokenFor(bob, "2026-01-16T10:00:00Z");
    const later = await book(bob, "2026-01-16T11:00:00Z");
    await meetings().cancelMeeting({ meetingId: later.id, sendNotifications: true });
    expect(await problemOf(meetings().rescheduleMeeting({ meetingId: later.id, slotToken: token }))).toBe(
      "meeting-not-reschedulable",
    );
    t.clock.set("2026-01-16T09:30:00Z");
    expect(
      await problemDetailOf(meetings().rescheduleMeeting({ meetingId: meeting.id, slotToken: token })),
    ).toMatchObject({ name: "meeting-not-reschedulable" });
  });

  it("verifies the token: expired, forged or another organization's", async () => {
    const token = await tokenFor(bob, "2026-01-16T10:00:00Z");
    expect(await problemOf(meetings().rescheduleMeeting({ meetingId: meeting.id, slotToken: `${token}x` }))).toBe(
      "slot-token-invalid",
    );
    const foreignHost = await givenHost(t.db, other);
    const foreign = await givenSchedule(t.db, other, [foreignHost]);
    const foreignToken = await tokenFor(foreignHost, "2026-01-16T10:00:00Z", { orgId: other, scheduleId: foreign.id });
    expect(await problemOf(meetings().rescheduleMeeting({ meetingId: meeting.id, slotToken: foreignToken }))).toBe(
      "slot-token-invalid",
    );
    t.clock.advance(10 * MINUTE);
    expect(await problemOf(meetings().rescheduleMeeting({ meetingId: meeting.id, slotToken: token }))).toBe(
      "slot-token-expired",
    );
  });

  it("refuses a token of another schedule", async () => {
    const second = await givenSchedule(t.db, acme, [bob], { name: "Demo" });
    const token = await tokenFor(bob, "2026-01-16T10:00:00Z", { scheduleId: second.id });
    expect(await problemOf(meetings().rescheduleMeeting({ meetingId: meeting.id, slotToken: token }))).toBe(
      "schedule-mismatch",
    );
  });

  it("answers slot-conflict when the new slot was taken meanwhile, changing nothing", async () => {
    const token = await tokenFor(bob, "2026-01-16T10:00:00Z");
    await book(bob, "2026-01-16T10:00:00Z");
    t.calendar.calls.length = 0;
    expect(
      await problemDetailOf(meetings().rescheduleMeeting({ meetingId: meeting.id, slotToken: token })),
    ).toMatchObject({
      name: "slot-conflict",
      extensions: { rerunAvailability: true },
    });
    expect(await stored(meeting.id)).toMatchObject({ version: 1, host_user_id: ada.userId });
    expect(t.calendar.calls).toEqual([]);
  });

  it("rolls the move back when the calendar refuses it", async () => {
    const token = await tokenFor(bob, "2026-01-16T10:00:00Z");
    t.calendar.failNext.add("update");
    expect(await problemOf(meetings().rescheduleMeeting({ meetingId: meeting.id, slotToken: token }))).toBe(
      "connect:Internal",
    );
    expect(await stored(meeting.id)).toMatchObject({ version: 1, host_user_id: ada.userId });
    expect(await outboxRows(t.db)).toEqual([]);
  });

  it("hides other organizations' meetings", async () => {
    const token = await tokenFor(bob, "2026-01-16T10:00:00Z");
    expect(await problemOf(meetings(other).rescheduleMeeting({ meetingId: meeting.id, slotToken: token }))).toBe(
      "meeting-not-found",
    );
    expect(await problemOf(meetings().rescheduleMeeting({ meetingId: newId("mtg_"), slotToken: token }))).toBe(
      "meeting-not-found",
    );
  });
});

describe("CancelMeeting", () => {
  it("cancels: the calendar event goes, the audit and the event record the reason", async () => {
    t.clock.advance(MINUTE);
    await meetings().cancelMeeting({ meetingId: meeting.id, sendNotifications: false, reason: "Moved on" });
    const { meeting: read } = await meetings().getMeeting({ meetingId: meeting.id });
    expect(read?.status).toBe("canceled");
    expect(read?.updateTime && timestampDate(read.updateTime)).toEqual(t.clock.now());
    expect(await stored(meeting.id)).toMatchObject({ version: 2, canceled_at: t.clock.now() });
    expect(t.calendar.calls).toEqual([{ op: "delete", eventId: meeting.calendarEventId }]);
    expect(await audit(meeting.id)).toContainEqual({
      action: "canceled",
      reason: "Moved on",
      previous_host_user_id: ada.userId,
      new_host_user_id: null,
    });
    const rows = await outboxRows(t.db);
    expect(rows).toMatchObject([
      {
        type: EVENT_TYPES.meetingCanceled,
        data: { meeting: { id: meeting.id, status: "canceled" }, reason: "Moved on" },
      },
    ]);
    // proto3 JSON leaves false out: notices suppressed.
    expect(rows[0]?.data).not.toHaveProperty("sendNotifications");
    expect(t.commits()).toBe(2);
  });

  it("succeeds again on a canceled meeting without writing or sending anything", async () => {
    await meetings().cancelMeeting({ meetingId: meeting.id, sendNotifications: true });
    const before = await stored(meeting.id);
    t.clock.advance(MINUTE);
    await meetings().cancelMeeting({ meetingId: meeting.id, sendNotifications: true, reason: "again" });
    expect(await stored(meeting.id)).toEqual(before);
    expect(await outboxRows(t.db)).toHaveLength(1);
    expect(t.calendar.calls).toHaveLength(1);
    // Canceled wins over completed: still a quiet success after the end.
    t.clock.set("2026-02-01T00:00:00Z");
    await meetings().cancelMeeting({ meetingId: meeting.id, sendNotifications: true });
    expect(await outboxRows(t.db)).toHaveLength(1);
  });

  it("refuses a meeting that has ended", async () => {
    t.clock.set("2026-01-16T09:30:00Z");
    expect(await problemOf(meetings().cancelMeeting({ meetingId: meeting.id, sendNotifications: true }))).toBe(
      "meeting-completed",
    );
    t.clock.set("2026-01-16T09:29:59Z");
    await meetings().cancelMeeting({ meetingId: meeting.id, sendNotifications: true });
  });

  it("limits the reason to 500 characters", async () => {
    const tooLong = await problemDetailOf(
      meetings().cancelMeeting({ meetingId: meeting.id, sendNotifications: true, reason: "x".repeat(501) }),
    );
    expect(tooLong).toMatchObject({ name: "invalid-field", extensions: { field: "reason" } });
    await meetings().cancelMeeting({ meetingId: meeting.id, sendNotifications: true, reason: "é".repeat(500) });
    expect((await meetings().getMeeting({ meetingId: meeting.id })).meeting?.status).toBe("canceled");
  });

  it("hides other organizations' meetings and unknown ids alike", async () => {
    expect(await problemOf(meetings(other).cancelMeeting({ meetingId: meeting.id, sendNotifications: true }))).toBe(
      "meeting-not-found",
    );
    expect(await problemOf(meetings().cancelMeeting({ meetingId: newId("mtg_"), sendNotifications: true }))).toBe(
      "meeting-not-found",
    );
    expect(await problemOf(meetings().cancelMeeting({ meetingId: "meeting", sendNotifications: true }))).toBe(
      "invalid-resource-id",
    );
  });

  it("frees the slot for another booking", async () => {
    await meetings().cancelMeeting({ meetingId: meeting.id, sendNotifications: true });
    const again = await book(ada, "2026-01-16T09:00:00Z");
    expect(again.id).not.toBe(meeting.id);
  });
});
