import { createHmac } from "node:crypto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { formValuesHash } from "../src/domain/form.js";
import {
  acme,
  ada,
  booking,
  EMEA,
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
  formValues,
  givenHost,
  givenSchedule,
  problemDetailOf,
  problemOf,
  SLOT_TOKEN_SECRET,
  SURVEY,
} from "./builders.js";

useBookingWorld();

// What BookMeeting checks before it books: the slot token, the form values, the attendee and the survey.
describe("BookMeeting", () => {
  it("refuses a token 10 minutes after it was issued", async () => {
    const token = await tokenFor();
    t.clock.advance(10 * MINUTE);
    const expired = await problemDetailOf(meetings().bookMeeting(booking(token)));
    expect(expired.name).toBe("slot-token-expired");
    t.clock.advance(-1);
    expect((await meetings().bookMeeting(booking(token))).meeting?.id).toMatch(/^mtg_/);
  });

  it("refuses tampered, malformed and other organizations' tokens as invalid", async () => {
    const token = await tokenFor();
    // Another host (bytes 17–31) under the original MAC.
    const bytes = Buffer.from(token, "base64url");
    bytes[20] = (bytes[20] ?? 0) ^ 0x01;
    const forged = bytes.toString("base64url");
    expect(await problemOf(meetings().bookMeeting(booking(forged)))).toBe("slot-token-invalid");
    expect(await problemOf(meetings().bookMeeting(booking("not-a-token")))).toBe("slot-token-invalid");

    const foreignHost = await givenHost(t.db, other);
    const foreign = await givenSchedule(t.db, other, [foreignHost]);
    const foreignToken = await tokenFor({ orgId: other, scheduleId: foreign.id });
    expect(await problemOf(meetings().bookMeeting(booking(foreignToken)))).toBe("slot-token-invalid");
    expect(await meetingCount()).toBe(0);
  });

  it("still books with a token of the previous format (format 1) while it lives", async () => {
    const payload = {
      orgId: acme,
      scheduleId: schedule.id,
      hostUserId: ada.userId,
      start: "2026-01-16T09:00:00.000Z",
      end: "2026-01-16T09:30:00.000Z",
      expiresAt: new Date(t.clock.now().getTime() + 10 * MINUTE).toISOString(),
      preview: false,
      formValuesHash: formValuesHash(EMEA),
    };
    const format1 = (p: object) => {
      const encoded = Buffer.from(JSON.stringify(p)).toString("base64url");
      return `${encoded}.${createHmac("sha256", SLOT_TOKEN_SECRET).update(encoded).digest("base64url")}`;
    };
    const genuine = format1(payload);
    const tampered = `${genuine.slice(0, -1)}${genuine.endsWith("A") ? "B" : "A"}`;
    expect(await problemOf(meetings().bookMeeting(booking(tampered)))).toBe("slot-token-invalid");
    expect(await problemOf(meetings().bookMeeting(booking(format1({ ...payload, preview: "no" }))))).toBe(
      "slot-token-invalid",
    );
    const { meeting } = await meetings().bookMeeting(booking(format1(payload)));
    expect(meeting?.host?.userId).toBe(ada.userId);
    expect(meeting?.startTime && timestampDate(meeting.startTime)).toEqual(new Date("2026-01-16T09:00:00Z"));
  });

  it("refuses form values other than those the token was issued for", async () => {
    const token = await tokenFor({ values: { region: "EMEA", products: ["crm", "voice"] } });
    const reordered = booking(token, { formValues: formValues({ region: "EMEA", products: ["voice", "crm"] }) });
    expect(await problemDetailOf(meetings().bookMeeting(reordered))).toMatchObject({
      name: "slot-token-invalid",
      detail: "The form values differ from those the slot token was issued for.",
    });
    const keyOrder = booking(token, { formValues: formValues({ products: ["crm", "voice"], region: "EMEA" }) });
    expect((await meetings().bookMeeting(keyOrder)).meeting?.id).toMatch(/^mtg_/);
  });

  it("refuses a schedule that became a draft or was disabled after the token was issued", async () => {
    const token = await tokenFor();
    await t.db.query("UPDATE scheduling.schedules SET status = 'disabled' WHERE id = $1", [schedule.id]);
    expect(await problemOf(meetings().bookMeeting(booking(token)))).toBe("schedule-unavailable");
    await t.db.query("UPDATE scheduling.schedules SET status = 'draft' WHERE id = $1", [schedule.id]);
    expect(await problemOf(meetings().bookMeeting(booking(token)))).toBe("schedule-not-found");
  });

  it("checks the form values again against the schedule's current form", async () => {
    const token = await tokenFor();
    await t.db.query(
      `UPDATE scheduling.schedules SET matching_form = matching_form || '[{"key":"seats","label":"Seats","type":"number","options":[],"required":true}]'::jsonb
        WHERE id = $1`,
      [schedule.id],
    );
    expect(await problemDetailOf(meetings().bookMeeting(booking(token)))).toMatchObject({
      name: "form-validation",
      extensions: { fieldErrors: [{ field: "seats", message: "is required" }] },
    });
  });

  it("lists every attendee problem as fieldErrors", async () => {
    const token = await tokenFor();
    const bad = await problemDetailOf(
      meetings().bookMeeting(
        booking(token, {
          attendee: { email: "ada@", firstName: "Ada", lastName: " ", phone: "0155 555" },
          additionalAttendees: ["ok@analytical.example", "not an email"],
        }),
      ),
    );
    expect(bad.name).toBe("form-validation");
    expect(bad.extensions.fieldErrors).toEqual([
      { field: "attendee.email", message: expect.any(String) },
      { field: "attendee.lastName", message: "is required" },
      { field: "attendee.phone", message: expect.stringContaining("E.164") },
      { field: "additionalAttendees[1]", message: expect.any(String) },
    ]);
    const crowd = Array.from({ length: 51 }, (_, i) => `guest${i}@analytical.example`);
    expect(await problemDetailOf(meetings().bookMeeting(booking(token, { additionalAttendees: crowd })))).toMatchObject(
      {
        name: "form-validation",
        extensions: { fieldErrors: [{ field: "additionalAttendees", message: "must list at most 50 addresses" }] },
      },
    );
    const fifty = crowd.slice(0, 50);
    expect(
      (await meetings().bookMeeting(booking(token, { additionalAttendees: fifty }))).meeting?.additionalAttendees,
    ).toHaveLength(50);
  });

  it("rejects unknown survey questions and missing required answers", async () => {
    const token = await tokenFor();
    const unknown = await problemDetailOf(
      meetings().bookMeeting(booking(token, { surveyResponses: { ...SURVEY, "Favourite colour?": "Blue" } })),
    );
    expect(unknown).toMatchObject({
      name: "booking-validation-failed",
      extensions: { unknownQuestions: ["Favourite colour?"] },
    });
    expect(unknown.detail).toContain("Favourite colour?");
    const missing = await problemDetailOf(
      meetings().bookMeeting(booking(token, { surveyResponses: { "Anything else?": "x" } })),
    );
    expect(missing).toMatchObject({
      name: "form-validation",
      extensions: {
        fieldErrors: [{ field: "surveyResponses.What would you like to discuss?", message: "is required" }],
      },
    });
  });
});
