import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type {
  BookMeetingRequest,
  CancelMeetingRequest,
  RescheduleMeetingRequest,
} from "@platform/contracts/scheduling";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ADA,
  API,
  BEN,
  BOOKED_MEETING,
  buildTestGateway,
  expectProblem,
  FOREIGN_MEETING,
  get,
  ORG,
  PAST_MEETING,
  PLAIN_MEETING,
  SCHEDULE,
  type TestGateway,
  UNPUBLISHED_SCHEDULE,
} from "./harness.js";

let gw: TestGateway;
let key: string;
beforeEach(async () => {
  gw = await buildTestGateway();
  key = gw.identity.addToken({ orgId: ORG, scopes: ["smart-scheduling:read", "smart-scheduling:write"] });
});
afterEach(async () => {
  await gw.app.close();
});

const MEETING_FIELDS = [
  "id",
  "orgId",
  "host",
  "attendee",
  "additionalAttendees",
  "title",
  "startTime",
  "endTime",
  "timeZone",
  "location",
  "conferencing",
  "calendarEventId",
  "status",
  "createdAt",
  "updatedAt",
  "smartScheduling",
  "personalScheduling",
  "teamScheduling",
  "meetingAi",
].sort();

const ADA_HOST = {
  userId: ADA,
  email: "ada@acme.example",
  firstName: "Ada",
  lastName: "Admin",
  displayName: "Ada Admin",
};
const BEN_HOST = {
  userId: BEN,
  email: "ben@acme.example",
  firstName: "Ben",
  lastName: "Baker",
  displayName: "Ben Baker",
};
const QUESTION = "What would you like to discuss?";
const NOW = "2026-01-15T12:00:00.000Z";

function booking(overrides: Record<string, unknown> = {}) {
  return {
    slotToken: gw.scheduling.slotToken(),
    attendee: {
      firstName: "Robin",
      lastName: "Ray",
      email: "robin@customer.example",
      phone: "+442071838750",
      timeZone: "Europe/London",
    },
    formValues: { region: "emea", seats: 12 },
    surveyResponses: { [QUESTION]: "Onboarding" },
    additionalAttendees: ["kim@customer.example"],
    ...overrides,
  };
}

/** A request with an API key, a fresh Idempotency-Key and a JSON body unless told otherwise. */
function send(
  method: "POST" | "PATCH" | "DELETE",
  url: string,
  body?: unknown,
  headers: Record<string, string | undefined> = {},
  apiKey = key,
) {
  const all: Record<string, string | undefined> = {
    "x-platform-api-key": apiKey,
    ...(method === "DELETE" ? {} : { "idempotency-key": `k-${Math.random()}` }),
    ...(body !== undefined ? { "content-type": "application/json" } : {}),
    ...headers,
  };
  return gw.app.inject({
    method,
    url: `${API}${url}`,
    headers: Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined)) as Record<string, string>,
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });
}

const book = (body: unknown, headers: Record<string, string | undefined> = {}, query = "") =>
  send("POST", `/scheduled-meetings${query}`, body, headers);
const reschedule = (id: string, body: unknown, headers: Record<string, string | undefined> = {}) =>
  send("PATCH", `/scheduled-meetings/${id}`, body, headers);
const cancel = (id: string, query = "", headers: Record<string, string | undefined> = {}) =>
  send("DELETE", `/scheduled-meetings/${id}${query}`, undefined, headers);

describe("POST /scheduled-meetings", () => {
  it("books: 201 with the canonical Meeting, all four sub-objects present", async () => {
    const res = await book(booking());
    expect(res.statusCode).toBe(201);
    expect(res.headers["ratelimit-policy"]).toBe('"write";q=20;w=60');
    expect(res.headers["x-idempotent-replay"]).toBeUndefined();
    const meeting = res.json();
    expect(Object.keys(meeting).sort()).toEqual(MEETING_FIELDS);
    const id = meeting.id as string;
    expect(id).toMatch(/^mtg_/);
    expect(meeting).toEqual({
      id,
      orgId: ORG,
      host: ADA_HOST,
      attendee: {
        email: "robin@customer.example",
        firstName: "Robin",
        lastName: "Ray",
        phone: "+442071838750",
        timeZone: "Europe/London",
      },
      additionalAttendees: ["kim@customer.example"],
      title: "Discovery call with Robin Ray",
      startTime: "2026-01-16T09:00:00.000Z",
      endTime: "2026-01-16T09:30:00.000Z",
      timeZone: "Europe/Berlin",
      location: { type: "video", provider: "video_a", joinUrl: `https://video-a.example/j/${id}`, address: null },
      conferencing: { provider: "video_a", providerMeetingId: `va-${id}` },
      calendarEventId: `evt-${id}`,
      status: "scheduled",
      createdAt: NOW,
      updatedAt: NOW,
      smartScheduling: {
        scheduleId: SCHEDULE,
        formValues: [
          { key: "region", answer: "emea" },
          { key: "seats", answer: 12 },
        ],
        surveyResponses: [{ question: QUESTION, answer: "Onboarding" }],
        rescheduleUrl: `https://book.example/r/${id}`,
        cancelUrl: `https://book.example/c/${id}`,
        campaign: null,
        preview: false,
      },
      personalScheduling: null,
      teamScheduling: null,
      meetingAi: null,
    });
  });

  it("passes the booking to scheduling, attendee nulls as unset and form values as protobuf Values", async () => {
    const {
      additionalAttendees: _a,
      surveyResponses: _s,
      ...body
    } = booking({ attendee: { firstName: "Robin", lastName: "Ray", email: "r@c.example", phone: null } });
    const res = await book(body);
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      attendee: { email: "r@c.example", phone: null, timeZone: null },
      additionalAttendees: [],
      smartScheduling: { surveyResponses: [], campaign: null },
    });
    const req = gw.scheduling.lastRequest<BookMeetingRequest>("bookMeeting")!;
    expect(req.slotToken).toBe(body.slotToken);
    expect(req.attendee).toMatchObject({ email: "r@c.example", firstName: "Robin", lastName: "Ray" });
    expect(req.attendee?.phone).toBeUndefined();
    expect(req.attendee?.timeZone).toBeUndefined();
    expect(Object.fromEntries(Object.entries(req.formValues).map(([k, v]) => [k, toJson(ValueSchema, v)]))).toEqual({
      region: "emea",
      seats: 12,
    });
    expect(req.surveyResponses).toEqual({});
    expect(req.additionalAttendees).toEqual([]);
    expect(req.campaign).toBeUndefined();
  });

  it("records the UTM query parameters as the campaign, absent ones as null", async () => {
    const res = await book(booking(), {}, "?utm_source=newsletter&utm_campaign=spring&utm_content=cta");
    expect(res.statusCode).toBe(201);
    expect(res.json().smartScheduling.campaign).toEqual({
      id: null,
      source: "newsletter",
      medium: null,
      campaign: "spring",
      term: null,
      content: "cta",
    });
    const sent = gw.scheduling.lastRequest<BookMeetingRequest>("bookMeeting")!.campaign!;
    expect(sent).toMatchObject({ source: "newsletter", campaign: "spring", content: "cta" });
    expect([sent.id, sent.medium, sent.term]).toEqual([undefined, undefined, undefined]);

    const all = "?utm_id=42&utm_source=s&utm_medium=m&utm_campaign=c&utm_term=t&utm_content=x";
    const full = await book(booking({ slotToken: gw.scheduling.slotToken({ hostUserId: BEN }) }), {}, all);
    expect(full.json().smartScheduling.campaign).toEqual({
      id: "42",
      source: "s",
      medium: "m",
      campaign: "c",
      term: "t",
      content: "x",
    });
    // No UTM parameter, no campaign (any other query parameter is 400 invalid-filter).
    expectProblem(
      await book(booking({ slotToken: gw.scheduling.slotToken({ start: "2026-01-17T09:00:00.000Z" }) }), {}, "?ref=x"),
      "invalid-filter",
      { field: "ref" },
    );
    const none = await book(
      booking({ slotToken: gw.scheduling.slotToken({ start: "2026-01-17T09:00:00.000Z" }) }),
      {},
      "",
    );
    expect(none.json().smartScheduling.campaign).toBeNull();
    expect(gw.scheduling.lastRequest<BookMeetingRequest>("bookMeeting")?.campaign).toBeUndefined();
  });

  it("books a slot from availability, with its host and preview flag", async () => {
    const search = await gw.app.inject({
      method: "POST",
      url: `${API}/smart-schedules/${SCHEDULE}/availability`,
      headers: { "x-platform-api-key": key, "content-type": "application/json" },
      payload: JSON.stringify({ formValues: { region: "emea" }, preview: true }),
    });
    const slot = search.json().hostGroups[1][0].slots[1];
    const res = await book(booking({ slotToken: slot.slotToken, formValues: { region: "emea" } }));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      host: BEN_HOST,
      startTime: slot.startTime,
      endTime: slot.endTime,
      smartScheduling: { preview: true },
    });
  });

  it("replays the same key and body with the original 201 and X-Idempotent-Replay: true", async () => {
    const body = booking();
    const headers = { "idempotency-key": "book-robin" };
    const first = await book(body, headers);
    const again = await book(body, headers);
    expect(again.statusCode).toBe(201);
    expect(again.headers["x-idempotent-replay"]).toBe("true");
    expect(again.json()).toEqual(first.json());
    expectProblem(await book({ ...body, formValues: { region: "amer" } }, headers), "idempotency-key-conflict");
  });

  it("requires an Idempotency-Key", async () => {
    expectProblem(await book(booking(), { "idempotency-key": undefined }), "idempotency-key-required");
    expectProblem(await book(booking(), { "idempotency-key": "" }), "idempotency-key-required");
    expect(gw.scheduling.lastRequest("bookMeeting")).toBeUndefined();
  });

  const attendee = { firstName: "Robin", lastName: "Ray", email: "robin@customer.example" };
  it.each([
    ["no slotToken", { slotToken: undefined }, "slotToken"],
    ["a slotToken that is no string", { slotToken: 7 }, "slotToken"],
    ["no attendee", { attendee: undefined }, "attendee"],
    ["a null attendee", { attendee: null }, "attendee"],
    ["an attendee without email", { attendee: { firstName: "R", lastName: "R" } }, "attendee.email"],
    ["an attendee without lastName", { attendee: { firstName: "R", email: "r@c.example" } }, "attendee.lastName"],
    ["a phone that is no string", { attendee: { ...attendee, phone: 4420 } }, "attendee.phone"],
    ["an unknown attendee field", { attendee: { ...attendee, company: "C" } }, "attendee.company"],
    ["no formValues", { formValues: undefined }, "formValues"],
    ["an object answer", { formValues: { region: { code: "emea" } } }, "formValues.region"],
    ["a survey answer that is no string", { surveyResponses: { [QUESTION]: 5 } }, `surveyResponses.${QUESTION}`],
    ["51 additional attendees", { additionalAttendees: Array(51).fill("a@b.example") }, "additionalAttendees"],
    ["an additional attendee that is no string", { additionalAttendees: [5] }, "additionalAttendees.0"],
    ["a preview flag", { preview: true }, "preview"],
  ])("answers 400 invalid-field for %s", async (_, overrides, field) => {
    const body = JSON.parse(JSON.stringify(booking(overrides)));
    const problemBody = expectProblem(await book(body), "invalid-field", { field });
    expect(problemBody.detail).toContain(field);
    expect(gw.scheduling.lastRequest("bookMeeting")).toBeUndefined();
  });

  it("accepts 50 additional attendees", async () => {
    const res = await book(booking({ additionalAttendees: Array(50).fill("a@b.example") }));
    expect(res.statusCode).toBe(201);
  });

  it("answers 400 invalid-field for a repeated UTM parameter", async () => {
    expectProblem(await book(booking(), {}, "?utm_source=a&utm_source=b"), "invalid-field", { field: "utm_source" });
  });

  it("passes form-validation on with its fieldErrors", async () => {
    const res = await book(
      booking({
        attendee: {
          firstName: "R",
          lastName: "R",
          email: "not-an-email",
          phone: "0207 183 8750",
          timeZone: "Mars/Olympus",
        },
      }),
    );
    const body = expectProblem(res, "form-validation");
    expect(body.fieldErrors).toEqual([
      { field: "attendee.email", message: "Not a valid email." },
      { field: "attendee.phone", message: "Not an E.164 number." },
      { field: "attendee.timeZone", message: "Not an IANA time zone." },
    ]);
  });

  it("passes slot-conflict on with rerunAvailability", async () => {
    expect((await book(booking())).statusCode).toBe(201);
    const taken = expectProblem(await book(booking()), "slot-conflict", { rerunAvailability: true });
    expect(taken.rerunAvailability).toBe(true);
  });

  it("passes the slot token problems and booking-validation-failed on", async () => {
    expectProblem(await book(booking({ slotToken: "made-up" })), "slot-token-invalid");
    const token = gw.scheduling.slotToken();
    gw.clock.advance(10 * 60_000 + 1_000);
    expectProblem(await book(booking({ slotToken: token })), "slot-token-expired");
    expectProblem(
      await book(booking({ surveyResponses: { "Who referred you?": "Kim" } })),
      "booking-validation-failed",
    );
  });

  it("requires smart-scheduling:write", async () => {
    const reader = gw.identity.addToken({ orgId: ORG, scopes: ["smart-scheduling:read"] });
    expectProblem(await send("POST", "/scheduled-meetings", booking(), {}, reader), "insufficient-scope", {
      requiredScope: "smart-scheduling:write",
    });
  });
});

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
