import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type GetAvailabilityResponse, MeetingService, SmartScheduleService } from "@platform/contracts/scheduling";
import { newId } from "@platform/kit/ids";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { formValuesHash } from "../src/domain/form.js";
import type { HostRecord, ScheduleRecord } from "../src/domain/model.js";
import { verifySlotToken } from "../src/domain/slot-token.js";
import { txStore } from "../src/store/index.js";
import {
  anAttendee,
  createTestScheduling,
  formValues,
  givenHost,
  givenSchedule,
  problemDetailOf,
  problemOf,
  SLOT_TOKEN_SECRET,
  SURVEY,
  type TestScheduling,
} from "./builders.js";

let t: TestScheduling;
const acme = newId("org_");
const other = newId("org_");
let ada: HostRecord;
let bob: HostRecord;
let schedule: ScheduleRecord;

const api = (orgId = acme) => t.caller(SmartScheduleService, orgId);
const iso = (s: string) => new Date(s).toISOString();
const ts = (s: string) => timestampFromDate(new Date(s));

/** Per host (by display name) its slot starts, group by group. */
function starts(res: GetAvailabilityResponse): Record<string, string[]>[] {
  return res.hostGroups.map((g) =>
    Object.fromEntries(
      g.hosts.map((h) => [
        h.host?.displayName ?? "",
        h.slots.map((s) => (s.startTime ? timestampDate(s.startTime).toISOString() : "")),
      ]),
    ),
  );
}

/** 16 January, 09:00 to 11:00 UTC. */
const FRIDAY_MORNING = { rangeStart: ts("2026-01-16T09:00:00Z"), rangeEnd: ts("2026-01-16T11:00:00Z") };

beforeAll(async () => {
  t = await createTestScheduling();
});
afterAll(() => t.close());
beforeEach(async () => {
  await t.reset();
  ada = await givenHost(t.db, acme, { displayName: "Ada" });
  bob = await givenHost(t.db, acme, { displayName: "Bob" });
  schedule = await givenSchedule(t.db, acme, [ada, bob]);
});

describe("GetAvailability", () => {
  it("routes the form values to host groups and offers their slots from the earliest bookable time", async () => {
    const emea = await api().getAvailability({ scheduleId: schedule.id, formValues: formValues({ region: "EMEA" }) });
    expect(emea.hostGroups.map((g) => g.hosts.map((h) => h.host))).toEqual([
      [expect.objectContaining({ userId: ada.userId, displayName: "Ada" })],
    ]);
    const slots = emea.hostGroups[0]?.hosts[0]?.slots ?? [];
    // Now is 12:00 UTC and the notice is 60 minutes; 30-minute steps.
    expect(slots.slice(0, 3).map((s) => s.startTime && timestampDate(s.startTime).toISOString())).toEqual([
      iso("2026-01-15T13:00:00Z"),
      iso("2026-01-15T13:30:00Z"),
      iso("2026-01-15T14:00:00Z"),
    ]);
    expect(slots[0]?.endTime && timestampDate(slots[0].endTime)).toEqual(new Date("2026-01-15T13:30:00Z"));
    // 14 days ahead at most: the last slot ends by 29 January, 12:00.
    const last = slots.at(-1)?.endTime;
    expect(last && timestampDate(last)).toEqual(new Date("2026-01-29T12:00:00Z"));
    expect(emea.matchTime && timestampDate(emea.matchTime)).toEqual(t.clock.now());

    const amer = await api().getAvailability({ scheduleId: schedule.id, formValues: formValues({ region: "AMER" }) });
    expect(amer.hostGroups.map((g) => g.hosts.map((h) => h.host?.displayName))).toEqual([["Ada", "Bob"]]);
  });

  it("keeps to the requested date range, its end inclusive", async () => {
    const res = await api().getAvailability({
      scheduleId: schedule.id,
      formValues: formValues({ region: "EMEA" }),
      ...FRIDAY_MORNING,
    });
    expect(starts(res)).toEqual([{ Ada: ["09:00", "09:30", "10:00", "10:30"].map((h) => iso(`2026-01-16T${h}:00Z`)) }]);
  });

  it("uses one of the booking periods, never snapping another length", async () => {
    const hour = await api().getAvailability({
      scheduleId: schedule.id,
      formValues: formValues({ region: "EMEA" }),
      durationMinutes: 60,
      ...FRIDAY_MORNING,
    });
    const slots = hour.hostGroups[0]?.hosts[0]?.slots ?? [];
    expect(slots.map((s) => s.startTime && timestampDate(s.startTime).toISOString())).toEqual([
      iso("2026-01-16T09:00:00Z"),
      iso("2026-01-16T09:30:00Z"),
      iso("2026-01-16T10:00:00Z"),
    ]);
    expect(slots[0]?.endTime && timestampDate(slots[0].endTime)).toEqual(new Date("2026-01-16T10:00:00Z"));
    for (const durationMinutes of [45, 0, 29]) {
      expect(
        await problemOf(
          api().getAvailability({
            scheduleId: schedule.id,
            formValues: formValues({ region: "EMEA" }),
            durationMinutes,
          }),
        ),
      ).toBe("availability-request-invalid");
    }
  });

  it("refuses an inverted date range and a time zone that is not IANA", async () => {
    const inverted = api().getAvailability({
      scheduleId: schedule.id,
      formValues: formValues({ region: "EMEA" }),
      rangeStart: FRIDAY_MORNING.rangeEnd,
      rangeEnd: FRIDAY_MORNING.rangeStart,
    });
    expect(await problemOf(inverted)).toBe("availability-request-invalid");
    const zone = api().getAvailability({
      scheduleId: schedule.id,
      formValues: formValues({ region: "EMEA" }),
      timeZone: "Mars/Olympus",
    });
    expect(await problemOf(zone)).toBe("availability-request-invalid");
  });

  it("answers an empty slot list for a range outside the booking window", async () => {
    const res = await api().getAvailability({
      scheduleId: schedule.id,
      formValues: formValues({ region: "AMER" }),
      rangeStart: ts("2026-03-01T00:00:00Z"),
      rangeEnd: ts("2026-03-02T00:00:00Z"),
    });
    expect(starts(res)).toEqual([{ Ada: [], Bob: [] }]);
  });

  it("reports every form error as a fieldErrors list", async () => {
    const missing = await problemDetailOf(api().getAvailability({ scheduleId: schedule.id, formValues: {} }));
    expect(missing).toMatchObject({
      name: "form-validation",
      extensions: { fieldErrors: [{ field: "region", message: "is required" }] },
    });
    const wrong = await problemDetailOf(
      api().getAvailability({
        scheduleId: schedule.id,
        formValues: formValues({ region: "Mars", products: ["crm", "fax"], colour: "blue" }),
      }),
    );
    expect(wrong.name).toBe("form-validation");
    expect((wrong.extensions.fieldErrors as { field: string }[]).map((e) => e.field)).toEqual([
      "region",
      "products",
      "colour",
    ]);
  });

  it("leaves out the host's meetings and busy blocks, but not canceled meetings", async () => {
    await txStore(t.db).insertBusyBlock({
      id: "busy_1",
      userId: ada.userId,
      start: new Date("2026-01-16T09:15:00Z"),
      end: new Date("2026-01-16T09:45:00Z"),
    });
    const book = async (start: string) => {
      const res = await api().getAvailability({
        scheduleId: schedule.id,
        formValues: formValues({ region: "EMEA" }),
        ...FRIDAY_MORNING,
      });
      const slot = res.hostGroups[0]?.hosts[0]?.slots.find(
        (s) => s.startTime && timestampDate(s.startTime).toISOString() === iso(start),
      );
      const { meeting } = await t.caller(MeetingService, acme).bookMeeting({
        slotToken: slot?.slotToken ?? "",
        attendee: anAttendee(),
        formValues: formValues({ region: "EMEA" }),
        surveyResponses: SURVEY,
      });
      return meeting?.id ?? "";
    };
    await book("2026-01-16T10:00:00Z");
    const canceled = await book("2026-01-16T10:30:00Z");
    await t.caller(MeetingService, acme).cancelMeeting({ meetingId: canceled, sendNotifications: true });

    const res = await api().getAvailability({
      scheduleId: schedule.id,
      formValues: formValues({ region: "EMEA" }),
      ...FRIDAY_MORNING,
    });
    expect(starts(res)).toEqual([{ Ada: [iso("2026-01-16T10:30:00Z")] }]);
  });

  it("signs each slot into a token of the org, schedule, host, times, preview flag and form values", async () => {
    const values = { region: "AMER", products: ["voice"] };
    const res = await api().getAvailability({
      scheduleId: schedule.id,
      formValues: formValues(values),
      preview: true,
      ...FRIDAY_MORNING,
    });
    const bobSlot = res.hostGroups[0]?.hosts.find((h) => h.host?.userId === bob.userId)?.slots[0];
    const verified = verifySlotToken(bobSlot?.slotToken ?? "", SLOT_TOKEN_SECRET, acme, t.clock.now());
    expect(verified).toMatchObject({
      scheduleId: schedule.id,
      hostUserId: bob.userId,
      start: new Date("2026-01-16T09:00:00Z"),
      end: new Date("2026-01-16T09:30:00Z"),
      expiresAt: new Date("2026-01-15T12:10:00Z"),
      preview: true,
    });
    expect(verified.issuedFor(formValuesHash(values))).toBe(true);
    expect(verified.issuedFor(formValuesHash({ region: "AMER" }))).toBe(false);
    // Bound to the org: another org's caller cannot verify it.
    expect(() => verifySlotToken(bobSlot?.slotToken ?? "", SLOT_TOKEN_SECRET, "org_other", t.clock.now())).toThrow();
  });

  it("answers in the compact form when asked: the same slots and tokens, without a message per slot", async () => {
    const request = { scheduleId: schedule.id, formValues: formValues({ region: "AMER", products: ["voice"] }) };
    const full = await api().getAvailability(request);
    const compact = await api().getAvailability({ ...request, compactSlots: true });
    expect(compact.matchTime).toEqual(full.matchTime);
    const expand = (res: GetAvailabilityResponse) =>
      res.hostGroups.map((g) =>
        g.hosts.map((h) => ({
          host: h.host,
          slots: h.startMinutes.map((minute, i) => ({
            start: new Date(minute * 60_000).toISOString(),
            end: new Date((minute + h.durationMinutes) * 60_000).toISOString(),
            token: h.slotTokens.slice(i * h.slotTokenLength, (i + 1) * h.slotTokenLength),
          })),
        })),
      );
    const asIs = (res: GetAvailabilityResponse) =>
      res.hostGroups.map((g) =>
        g.hosts.map((h) => ({
          host: h.host,
          slots: h.slots.map((s) => ({
            start: s.startTime ? timestampDate(s.startTime).toISOString() : "",
            end: s.endTime ? timestampDate(s.endTime).toISOString() : "",
            token: s.slotToken,
          })),
        })),
      );
    const slots = asIs(full);
    expect(slots.flat().reduce((n, h) => n + h.slots.length, 0)).toBeGreaterThan(100);
    expect(compact.hostGroups.flatMap((g) => g.hosts.flatMap((h) => h.slots))).toEqual([]);
    expect(compact.hostGroups[0]?.hosts[0]?.slotTokenLength).toBe(72);
    expect(expand(compact)).toEqual(slots);

    // In parts: each host's shared head once, then every slot's raw tail; head + base64url(tail)
    // is the token. A gateway that does not ask for parts gets the whole tokens above.
    const parts = await api().getAvailability({ ...request, compactSlots: true, tokenParts: true });
    const host = parts.hostGroups[0]?.hosts[0];
    expect(host?.slotTokens).toBe("");
    expect(host?.slotTokenHead).toMatch(/^[A-Za-z0-9_-]{48}$/);
    expect(host?.slotTokenTailBytes).toBe(18);
    const joined = (res: GetAvailabilityResponse) =>
      res.hostGroups.map((g) =>
        g.hosts.map((h) => ({
          ...h,
          slotTokens: h.startMinutes
            .map((_, i) => {
              const tail = h.slotTokenTails.subarray(i * h.slotTokenTailBytes, (i + 1) * h.slotTokenTailBytes);
              return h.slotTokenHead + Buffer.from(tail).toString("base64url");
            })
            .join(""),
          slotTokenLength: 72,
        })),
      );
    expect(
      expand({ ...parts, hostGroups: joined(parts).map((hosts) => ({ hosts })) } as GetAvailabilityResponse),
    ).toEqual(slots);
  });

  it("skips routed hosts that are not assigned to the schedule", async () => {
    const stranger = await givenHost(t.db, acme, { displayName: "Stranger" });
    const routed = await givenSchedule(t.db, acme, [ada], {
      routing: { rules: [], fallback: [[stranger.userId], [stranger.userId, ada.userId]] },
    });
    const res = await api().getAvailability({ scheduleId: routed.id, formValues: formValues({ region: "AMER" }) });
    expect(res.hostGroups.map((g) => g.hosts.map((h) => h.host?.displayName))).toEqual([["Ada"]]);
  });

  it("finds no draft or other org's schedule, and refuses a disabled one", async () => {
    const draft = await givenSchedule(t.db, acme, [ada], { status: "draft" });
    const foreign = await givenSchedule(t.db, other, [await givenHost(t.db, other)]);
    const disabled = await givenSchedule(t.db, acme, [ada], { status: "disabled" });
    const ask = (scheduleId: string) =>
      api().getAvailability({ scheduleId, formValues: formValues({ region: "EMEA" }) });
    expect(await problemOf(ask(draft.id))).toBe("schedule-not-found");
    expect(await problemOf(ask(foreign.id))).toBe("schedule-not-found");
    expect(await problemOf(ask(newId("sched_")))).toBe("schedule-not-found");
    expect(await problemOf(ask(disabled.id))).toBe("schedule-unavailable");
  });
});
