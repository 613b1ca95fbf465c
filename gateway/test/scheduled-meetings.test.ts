import type { CancelMeetingRequest, RescheduleMeetingRequest } from "@platform/contracts/scheduling";
import { describe, expect, it } from "vitest";
import {
  API,
  BEN,
  BOOKED_MEETING,
  expectProblem,
  FOREIGN_MEETING,
  get,
  ORG,
  PAST_MEETING,
  PLAIN_MEETING,
  SCHEDULE,
  UNPUBLISHED_SCHEDULE,
} from "./harness.js";
import {
  ADA_HOST,
  BEN_HOST,
  book,
  booking,
  cancel,
  gw,
  key,
  MEETING_FIELDS,
  NOW,
  QUESTION,
  reschedule,
  send,
  useMeetingsGateway,
} from "./scheduled-meetings-fixture.js";

useMeetingsGateway();

describe("GET /scheduled-meetings/{meetingId}", () => {
  it("renders a Smart Schedule booking: location members that do not apply and absent UTM values as null", async () => {
    const res = await get(gw.app, `${API}/scheduled-meetings/${BOOKED_MEETING}`, key);
    expect(res.statusCode).toBe(200);
    expect(res.headers["ratelimit-policy"]).toBe('"read";q=300;w=60');
    expect(Object.keys(res.json()).sort()).toEqual(MEETING_FIELDS);
    expect(res.json()).toEqual({
      id: BOOKED_MEETING,
      orgId: ORG,
      host: ADA_HOST,
      attendee: {
        email: "pat@customer.example",
        firstName: "Pat",
        lastName: "Lee",
        phone: "+14155550100",
        timeZone: "America/New_York",
      },
      additionalAttendees: ["sam@customer.example"],
      title: "Discovery call with Pat Lee",
      startTime: "2026-01-22T10:00:00.000Z",
      endTime: "2026-01-22T10:30:00.000Z",
      timeZone: "Europe/Berlin",
      location: { type: "in-person", provider: null, joinUrl: null, address: "1 Main St, Springfield" },
      conferencing: null,
      calendarEventId: "evt-booked",
      status: "scheduled",
      createdAt: "2026-01-12T08:00:00.000Z",
      updatedAt: "2026-01-13T08:00:00.000Z",
      smartScheduling: {
        scheduleId: SCHEDULE,
        formValues: [
          { key: "region", answer: "emea" },
          { key: "seats", answer: 40 },
          { key: "products", answer: ["crm", "voice"] },
          { key: "existingCustomer", answer: false },
        ],
        surveyResponses: [{ question: QUESTION, answer: "Pricing" }],
        rescheduleUrl: `https://book.example/r/${BOOKED_MEETING}`,
        cancelUrl: `https://book.example/c/${BOOKED_MEETING}`,
        campaign: { id: null, source: "newsletter", medium: null, campaign: null, term: null, content: null },
        preview: false,
      },
      personalScheduling: null,
      teamScheduling: null,
      meetingAi: null,
    });
  });

  it("renders every unset value as null and no additional attendees as []", async () => {
    const body = (await get(gw.app, `${API}/scheduled-meetings/${PLAIN_MEETING}`, key)).json();
    expect(Object.keys(body).sort()).toEqual(MEETING_FIELDS);
    expect(body).toMatchObject({
      attendee: { email: "pat@customer.example", firstName: "Pat", lastName: "Lee", phone: null, timeZone: null },
      additionalAttendees: [],
      location: null,
      conferencing: null,
      calendarEventId: null,
      smartScheduling: null,
      personalScheduling: null,
      teamScheduling: null,
      meetingAi: null,
    });
  });

  it("shows the derived status", async () => {
    expect((await get(gw.app, `${API}/scheduled-meetings/${PAST_MEETING}`, key)).json().status).toBe("completed");
  });

  it("answers 404 meeting-not-found for another org's meeting, 400 invalid-resource-id for a non-mtg_ id", async () => {
    expectProblem(await get(gw.app, `${API}/scheduled-meetings/${FOREIGN_MEETING}`, key), "meeting-not-found");
    for (const id of [SCHEDULE, "mtg_123", "booked"]) {
      expectProblem(await get(gw.app, `${API}/scheduled-meetings/${id}`, key), "invalid-resource-id");
    }
  });

  it("requires smart-scheduling:read", async () => {
    const writer = gw.identity.addToken({ orgId: ORG, scopes: ["smart-scheduling:write"] });
    expectProblem(await get(gw.app, `${API}/scheduled-meetings/${PLAIN_MEETING}`, writer), "insufficient-scope", {
      requiredScope: "smart-scheduling:read",
    });
  });
});

describe("PATCH /scheduled-meetings/{meetingId}", () => {
  const benSlot = () =>
    gw.scheduling.slotToken({ hostUserId: BEN, start: "2026-01-16T11:00:00.000Z", end: "2026-01-16T11:30:00.000Z" });

  it("moves the meeting to the slot, possibly another host's, keeping id, attendee and createdAt", async () => {
    const slotToken = benSlot();
    const res = await reschedule(BOOKED_MEETING, { slotToken, reason: "Customer asked" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["ratelimit-policy"]).toBe('"write";q=20;w=60');
    expect(Object.keys(res.json()).sort()).toEqual(MEETING_FIELDS);
    expect(res.json()).toMatchObject({
      id: BOOKED_MEETING,
      host: BEN_HOST,
      attendee: { email: "pat@customer.example", phone: "+14155550100" },
      startTime: "2026-01-16T11:00:00.000Z",
      endTime: "2026-01-16T11:30:00.000Z",
      status: "scheduled",
      createdAt: "2026-01-12T08:00:00.000Z",
      updatedAt: NOW,
    });
    expect(gw.scheduling.lastRequest<RescheduleMeetingRequest>("rescheduleMeeting")).toMatchObject({
      meetingId: BOOKED_MEETING,
      slotToken,
      reason: "Customer asked",
    });
    await reschedule(BOOKED_MEETING, { slotToken: gw.scheduling.slotToken() });
    expect(gw.scheduling.lastRequest<RescheduleMeetingRequest>("rescheduleMeeting")?.reason).toBe("");
  });

  it("replays with the original 200 and X-Idempotent-Replay: true", async () => {
    const body = { slotToken: benSlot() };
    const headers = { "idempotency-key": "move-pat" };
    const first = await reschedule(BOOKED_MEETING, body, headers);
    const again = await reschedule(BOOKED_MEETING, body, headers);
    expect(first.headers["x-idempotent-replay"]).toBeUndefined();
    expect(again.statusCode).toBe(200);
    expect(again.headers["x-idempotent-replay"]).toBe("true");
    expect(again.json()).toEqual(first.json());
  });

  it("requires an Idempotency-Key", async () => {
    expectProblem(
      await reschedule(BOOKED_MEETING, { slotToken: benSlot() }, { "idempotency-key": undefined }),
      "idempotency-key-required",
    );
  });

  it("answers 400 invalid-field when the body names the attendee, an unknown field, or no slotToken", async () => {
    const attendee = expectProblem(
      await reschedule(BOOKED_MEETING, { slotToken: benSlot(), attendee: { email: "new@customer.example" } }),
      "invalid-field",
      { field: "attendee" },
    );
    expect(attendee.detail).toContain("attendee cannot change");
    expectProblem(await reschedule(BOOKED_MEETING, { slotToken: benSlot(), startTime: NOW }), "invalid-field", {
      field: "startTime",
    });
    expectProblem(await reschedule(BOOKED_MEETING, { reason: "x" }), "invalid-field", { field: "slotToken" });
    expectProblem(await reschedule(BOOKED_MEETING, { slotToken: benSlot(), reason: 5 }), "invalid-field", {
      field: "reason",
    });
    expect(gw.scheduling.lastRequest("rescheduleMeeting")).toBeUndefined();
  });

  it("passes scheduling's problems on: not reschedulable, schedule mismatch, slot conflict, not found", async () => {
    expectProblem(await reschedule(PAST_MEETING, { slotToken: benSlot() }), "meeting-not-reschedulable");
    expect((await cancel(PLAIN_MEETING)).statusCode).toBe(204);
    expectProblem(await reschedule(PLAIN_MEETING, { slotToken: benSlot() }), "meeting-not-reschedulable");
    expectProblem(
      await reschedule(BOOKED_MEETING, { slotToken: gw.scheduling.slotToken({ scheduleId: UNPUBLISHED_SCHEDULE }) }),
      "schedule-mismatch",
    );
    expect((await book(booking({ slotToken: benSlot() }))).statusCode).toBe(201);
    expectProblem(await reschedule(BOOKED_MEETING, { slotToken: benSlot() }), "slot-conflict", {
      rerunAvailability: true,
    });
    expectProblem(await reschedule(FOREIGN_MEETING, { slotToken: benSlot() }), "meeting-not-found");
    expectProblem(await reschedule(SCHEDULE, { slotToken: benSlot() }), "invalid-resource-id");
  });
});

describe("DELETE /scheduled-meetings/{meetingId}", () => {
  it("cancels: 204 without a body or an Idempotency-Key, notifications on by default", async () => {
    const res = await cancel(PLAIN_MEETING);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe("");
    expect(res.headers["content-type"]).toBeUndefined();
    expect(res.headers["ratelimit-policy"]).toBe('"write";q=20;w=60');
    const req = gw.scheduling.lastRequest<CancelMeetingRequest>("cancelMeeting")!;
    expect(req).toMatchObject({ meetingId: PLAIN_MEETING, sendNotifications: true, reason: "" });
    expect(gw.scheduling.contexts.at(-1)?.idempotencyKey).toBeUndefined();
    const after = await get(gw.app, `${API}/scheduled-meetings/${PLAIN_MEETING}`, key);
    expect(after.json()).toMatchObject({ status: "canceled", updatedAt: NOW });
  });

  it("answers 204 again for a canceled meeting, and ignores an Idempotency-Key", async () => {
    expect((await cancel(PLAIN_MEETING, "", { "idempotency-key": "c-1" })).statusCode).toBe(204);
    const again = await cancel(PLAIN_MEETING, "", { "idempotency-key": "c-1" });
    expect(again.statusCode).toBe(204);
    expect(again.headers["x-idempotent-replay"]).toBeUndefined();
    expect(gw.scheduling.received.filter((r) => r.method === "cancelMeeting")).toHaveLength(2);
  });

  it("passes sendNotifications=false and the reason", async () => {
    const reason = "r".repeat(500);
    expect((await cancel(BOOKED_MEETING, `?sendNotifications=false&reason=${reason}`)).statusCode).toBe(204);
    expect(gw.scheduling.lastRequest<CancelMeetingRequest>("cancelMeeting")).toMatchObject({
      sendNotifications: false,
      reason,
    });
  });

  it("answers 400 invalid-field for a non-boolean sendNotifications or a reason over 500 characters", async () => {
    for (const value of ["no", "maybe", "", "true&sendNotifications=false"]) {
      expectProblem(await cancel(PLAIN_MEETING, `?sendNotifications=${value}`), "invalid-field", {
        field: "sendNotifications",
      });
    }
    const long = expectProblem(await cancel(PLAIN_MEETING, `?reason=${"r".repeat(501)}`), "invalid-field", {
      field: "reason",
    });
    expect(long.detail).toContain("500");
    expect(gw.scheduling.lastRequest("cancelMeeting")).toBeUndefined();
  });

  it("passes scheduling's problems on: meeting-completed, meeting-not-found", async () => {
    expectProblem(await cancel(PAST_MEETING), "meeting-completed");
    expectProblem(await cancel(FOREIGN_MEETING), "meeting-not-found");
    expectProblem(await cancel(SCHEDULE), "invalid-resource-id");
  });

  it("requires smart-scheduling:write", async () => {
    const reader = gw.identity.addToken({ orgId: ORG, scopes: ["smart-scheduling:read"] });
    expectProblem(
      await send("DELETE", `/scheduled-meetings/${PLAIN_MEETING}`, undefined, {}, reader),
      "insufficient-scope",
      {
        requiredScope: "smart-scheduling:write",
      },
    );
  });
});
