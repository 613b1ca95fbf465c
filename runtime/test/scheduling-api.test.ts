import { TOPICS } from "@platform/kit/events";
import { decodeEvent } from "@platform/kit/outbox";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { EmbeddedPlatform } from "../src/platform.js";
import { apiTest, CLOSE_TIMEOUT_MS, START_TIMEOUT_MS } from "./support/platform.js";

// Smart scheduling end to end on the embedded platform: gateway → scheduling → PGlite,
// events through the outbox and the in-process bus.
const t = apiTest({ name: "scheduling-api-test" });
const { call, problemType, clock } = t;
let platform: EmbeddedPlatform;
const events: { type: string; subject?: string; data: unknown }[] = [];

const attendee = { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", phone: "+14155550123" };
const surveyResponses = { "What would you like to discuss?": "Pricing" };

async function introSchedule(): Promise<{ id: string; formValues: Record<string, unknown> }> {
  const list = (await call("GET", "/smart-schedules?name=intro")).json();
  const id = list.items[0].id as string;
  const detail = (await call("GET", `/smart-schedules/${id}`)).json();
  const region = detail.matchingForm.fields.find((f: { key: string }) => f.key === "region");
  return { id, formValues: { region: region.options[0] } };
}

async function firstSlot(scheduleId: string, formValues: Record<string, unknown>, extra: object = {}) {
  const res = await call("POST", `/smart-schedules/${scheduleId}/availability`, { body: { formValues, ...extra } });
  expect(res.statusCode).toBe(200);
  for (const group of res.json().hostGroups) {
    for (const h of group) if (h.slots.length > 0) return { host: h.host, slot: h.slots[0], all: h.slots };
  }
  throw new Error("no slot offered");
}

beforeAll(async () => {
  platform = await t.start();
  await platform.bus.subscribe({
    groupId: "test-observer",
    topics: [TOPICS.scheduling],
    fromBeginning: true,
    handler: async (m) => {
      const e = decodeEvent(m);
      events.push({ type: e.type, subject: e.subject, data: e.data });
    },
  });
}, START_TIMEOUT_MS);
afterAll(() => t.close(), CLOSE_TIMEOUT_MS);
beforeEach(() => clock.advance(61_000));

describe("smart scheduling", () => {
  it("lists active schedules only and hides drafts even with status=all", async () => {
    const active = (await call("GET", "/smart-schedules")).json().items as { status: string }[];
    expect(active.length).toBeGreaterThan(0);
    expect(active.every((s) => s.status === "active")).toBe(true);
    const all = (await call("GET", "/smart-schedules?status=all")).json().items as { status: string }[];
    expect(all.some((s) => s.status === "disabled")).toBe(true);
    expect(all.some((s) => s.status === "draft")).toBe(false);
  });

  it("books a slot once, replays by key, refuses a double booking and publishes the booking", async () => {
    const { id, formValues } = await introSchedule();
    const { slot } = await firstSlot(id, formValues);
    const body = {
      slotToken: slot.slotToken,
      attendee,
      formValues,
      surveyResponses: { "What would you like to discuss?": "Pricing" },
    };
    const headers = { "idempotency-key": "book-1" };
    const booked = await call("POST", "/scheduled-meetings?utm_source=newsletter", { body, headers });
    expect(booked.statusCode).toBe(201);
    const meeting = booked.json();
    expect(meeting).toMatchObject({ status: "scheduled", startTime: slot.startTime, endTime: slot.endTime });
    expect(meeting.smartScheduling).toMatchObject({ scheduleId: id, preview: false });
    expect(meeting.smartScheduling.campaign).toEqual({
      id: null,
      source: "newsletter",
      medium: null,
      campaign: null,
      term: null,
      content: null,
    });
    for (const k of ["personalScheduling", "teamScheduling", "meetingAi"]) expect(meeting[k]).toBeNull();
    expect(meeting.calendarEventId).toEqual(expect.any(String));

    const replay = await call("POST", "/scheduled-meetings?utm_source=newsletter", { body, headers });
    expect(replay.statusCode).toBe(201);
    expect(replay.headers["x-idempotent-replay"]).toBe("true");
    expect(replay.json()).toEqual(meeting);

    const again = await call("POST", "/scheduled-meetings", { body });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ type: problemType("slot-conflict"), rerunAvailability: true });

    expect((await call("GET", `/scheduled-meetings/${meeting.id}`)).json()).toEqual(meeting);
    await platform.drainOutbox();
    await platform.bus.idle();
    const published = events.filter((e) => e.type === "scheduling.smartscheduler.booked" && e.subject === meeting.id);
    expect(published).toHaveLength(1);
  });

  it("refuses tampered, expired and mismatched tokens", async () => {
    const { id, formValues } = await introSchedule();
    const { slot } = await firstSlot(id, formValues);
    const tampered = `${slot.slotToken.slice(0, -3)}xyz`;
    const bad = await call("POST", "/scheduled-meetings", { body: { slotToken: tampered, attendee, formValues } });
    expect(bad.json().type).toBe(problemType("slot-token-invalid"));
    const other = await call("POST", "/scheduled-meetings", {
      body: { slotToken: slot.slotToken, attendee, formValues: { region: "nowhere" } },
    });
    expect(other.statusCode).toBe(422);
    clock.advance(10 * 60_000);
    const expired = await call("POST", "/scheduled-meetings", {
      body: { slotToken: slot.slotToken, attendee, formValues },
    });
    expect(expired.statusCode).toBe(410);
    expect(expired.json().type).toBe(problemType("slot-token-expired"));
  });

  it("reschedules to another slot and cancels once, then refuses both on a canceled meeting", async () => {
    const { id, formValues } = await introSchedule();
    const { all } = await firstSlot(id, formValues);
    const booking = await call("POST", "/scheduled-meetings", {
      body: { slotToken: all[1].slotToken, attendee, formValues, surveyResponses },
    });
    expect(booking.json()).toMatchObject({ status: "scheduled" });
    const booked = booking.json();
    clock.advance(1000);
    const moved = await call("PATCH", `/scheduled-meetings/${booked.id}`, {
      body: { slotToken: all[2].slotToken, reason: "Conflict" },
    });
    expect(moved.statusCode).toBe(200);
    expect(moved.json()).toMatchObject({ id: booked.id, createdAt: booked.createdAt, startTime: all[2].startTime });
    expect(moved.json().updatedAt).not.toBe(booked.updatedAt);

    const cancel = await call("DELETE", `/scheduled-meetings/${booked.id}?reason=No%20longer%20needed`);
    expect(cancel.statusCode).toBe(204);
    expect(cancel.body).toBe("");
    expect((await call("DELETE", `/scheduled-meetings/${booked.id}`)).statusCode).toBe(204);
    expect((await call("GET", `/scheduled-meetings/${booked.id}`)).json().status).toBe("canceled");
    const late = await call("PATCH", `/scheduled-meetings/${booked.id}`, { body: { slotToken: all[3].slotToken } });
    expect(late.statusCode).toBe(409);
    expect(late.json().type).toBe(problemType("meeting-not-reschedulable"));

    await platform.drainOutbox();
    await platform.bus.idle();
    const canceled = events.filter(
      (e) => e.type === "scheduling.smartscheduler.canceled" && JSON.stringify(e.data).includes(booked.id),
    );
    expect(canceled).toHaveLength(1);
  });

  it("validates availability requests", async () => {
    const { id, formValues } = await introSchedule();
    const odd = await call("POST", `/smart-schedules/${id}/availability`, {
      body: { formValues, durationMinutes: 17 },
    });
    expect(odd.json().type).toBe(problemType("availability-request-invalid"));
    const form = await call("POST", `/smart-schedules/${id}/availability`, {
      body: { formValues: { region: "Mars" } },
    });
    expect(form.statusCode).toBe(422);
    expect(form.json().type).toBe(problemType("form-validation"));
    expect(form.json().fieldErrors[0]).toMatchObject({ field: "region" });
    const disabled = (
      (await call("GET", "/smart-schedules?status=all")).json().items as { id: string; status: string }[]
    ).find((s) => s.status === "disabled");
    const off = await call("POST", `/smart-schedules/${disabled!.id}/availability`, { body: { formValues: {} } });
    expect(off.json().type).toBe(problemType("schedule-unavailable"));
  });
});
