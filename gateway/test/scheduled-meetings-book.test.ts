import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { BookMeetingRequest } from "@platform/contracts/scheduling";
import { describe, expect, it } from "vitest";
import { API, BEN, expectProblem, ORG, SCHEDULE } from "./harness.js";
import {
  ADA_HOST,
  BEN_HOST,
  book,
  booking,
  gw,
  key,
  MEETING_FIELDS,
  NOW,
  QUESTION,
  send,
  useMeetingsGateway,
} from "./scheduled-meetings-fixture.js";

useMeetingsGateway();

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
