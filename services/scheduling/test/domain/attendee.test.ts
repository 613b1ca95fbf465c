import { describe, expect, it } from "vitest";
import { emailProblem, validateAttendee, validateSurvey } from "../../src/domain/attendee.js";
import type { SurveyQuestion } from "../../src/domain/model.js";

const ada = { email: "ada@example.com", firstName: "Ada", lastName: "Lovelace" };

describe("emailProblem", () => {
  it("accepts dot-atom addresses on multi-label domains", () => {
    for (const email of [
      "ada@example.com",
      "ada.lovelace+intro@mail.example.co.uk",
      "o'brien@example.ie",
      "x!#$%&'*+/=?^_`{|}~-y@example.com",
      "a@xn--bcher-kva.example",
      "a@a-b.io",
      `${"a".repeat(64)}@example.com`,
    ]) {
      expect(emailProblem(email), email).toBeUndefined();
    }
  });

  it("rejects what is not a deliverable addr-spec", () => {
    for (const email of [
      "",
      "ada",
      "@example.com",
      "ada@",
      "ada@localhost",
      "ada@example.",
      "ada@.example.com",
      "ada@-example.com",
      "ada@example-.com",
      "ada@exa_mple.com",
      "ada@1.2.3.4",
      "ada@[127.0.0.1]",
      ".ada@example.com",
      "ada.@example.com",
      "ad..a@example.com",
      '"ada lovelace"@example.com',
      "ada lovelace@example.com",
      " ada@example.com",
      "ada@example.com ",
      "ada@@example.com",
      "ada(comment)@example.com",
      "adä@example.com",
      "ada@bücher.example",
      `${"a".repeat(65)}@example.com`,
      `ada@${"a".repeat(64)}.com`,
      `ada@${"a.".repeat(125)}com`,
    ]) {
      expect(emailProblem(email), email).toBeDefined();
    }
  });
});

describe("validateAttendee", () => {
  it("accepts a minimal and a full attendee", () => {
    expect(validateAttendee(ada)).toEqual([]);
    expect(validateAttendee({ ...ada, phone: "+14155550123", timeZone: "Europe/Berlin" })).toEqual([]);
    expect(validateAttendee({ ...ada, phone: null, timeZone: null })).toEqual([]);
  });

  it("names each bad field", () => {
    expect(
      validateAttendee({ email: "nope", firstName: " ", lastName: "", phone: "4155550123", timeZone: "Mars/Base" }),
    ).toEqual([
      { field: "attendee.email", message: "must contain an @" },
      { field: "attendee.firstName", message: "is required" },
      { field: "attendee.lastName", message: "is required" },
      { field: "attendee.phone", message: "must be an E.164 number such as +14155550123" },
      { field: "attendee.timeZone", message: "must be an IANA time zone such as Europe/Berlin" },
    ]);
    expect(validateAttendee({ ...ada, email: "" })).toEqual([{ field: "attendee.email", message: "is required" }]);
  });

  it("limits names to 200 characters, counting code points", () => {
    expect(validateAttendee({ ...ada, firstName: "a".repeat(200) })).toEqual([]);
    expect(validateAttendee({ ...ada, firstName: "😀".repeat(200) })).toEqual([]);
    expect(validateAttendee({ ...ada, lastName: "a".repeat(201) })).toEqual([
      { field: "attendee.lastName", message: "must be at most 200 characters" },
    ]);
  });

  it("rejects control characters in names", () => {
    expect(validateAttendee({ ...ada, firstName: "Ada\r\nBcc: x@example.com" })).toEqual([
      { field: "attendee.firstName", message: "must not contain control characters" },
    ]);
  });

  it("checks phones against E.164", () => {
    for (const phone of ["+491701234567", "+12", "+123456789012345"]) {
      expect(validateAttendee({ ...ada, phone }), phone).toEqual([]);
    }
    for (const phone of ["", "+", "+0123456", "+1", "+1234567890123456", "+1 415 555 0123", "004915112345678"]) {
      expect(validateAttendee({ ...ada, phone }), phone).toHaveLength(1);
    }
  });

  it("checks time zones against the IANA database", () => {
    expect(validateAttendee({ ...ada, timeZone: "Asia/Kolkata" })).toEqual([]);
    expect(validateAttendee({ ...ada, timeZone: "" })).toHaveLength(1);
    expect(validateAttendee({ ...ada, timeZone: "+05:30" })).toHaveLength(1);
  });
});

describe("validateSurvey", () => {
  const questions: SurveyQuestion[] = [
    { key: "what_brings_you_here", label: "What brings you here?", type: "long-text", required: true },
    { key: "anything_else", label: "Anything else?", type: "text", required: false },
  ];

  it("matches responses to questions by their text", () => {
    expect(validateSurvey(questions, { "What brings you here?": "Pricing" })).toEqual({ unknown: [], errors: [] });
    expect(validateSurvey(questions, { "What brings you here?": "Pricing", "Anything else?": "" })).toEqual({
      unknown: [],
      errors: [],
    });
  });

  it("lists responses to unknown questions, including ones sent under the question key", () => {
    expect(
      validateSurvey(questions, { "What brings you here?": "x", what_brings_you_here: "x", "Budget?": "10k" }).unknown,
    ).toEqual(["what_brings_you_here", "Budget?"]);
  });

  it("reports required questions left unanswered or blank", () => {
    const error = { field: "surveyResponses.What brings you here?", message: "is required" };
    expect(validateSurvey(questions, {})).toEqual({ unknown: [], errors: [error] });
    expect(validateSurvey(questions, { "What brings you here?": "  " }).errors).toEqual([error]);
  });

  it("reports answers that are not text", () => {
    expect(validateSurvey(questions, { "What brings you here?": 42 as unknown as string }).errors).toEqual([
      { field: "surveyResponses.What brings you here?", message: "must be a string" },
    ]);
  });
});
