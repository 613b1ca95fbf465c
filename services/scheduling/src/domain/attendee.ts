import { describeEmailFault, type EmailWording, MAX_EMAIL_ADDRESS, MAX_EMAIL_LOCAL } from "@platform/kit/email";
import type { FieldError, SurveyQuestion } from "./model.js";
import { isIanaZone } from "./time-zone.js";

// The address rules are the kit's (shared with identity's invitations); the wording of each
// fault is scheduling's API text.
const EMAIL_WORDING: EmailWording = {
  "too-long": `must be at most ${MAX_EMAIL_ADDRESS} characters`,
  "no-at": "must contain an @",
  "empty-local": "must have a local part before the @",
  "local-too-long": `must have a local part of at most ${MAX_EMAIL_LOCAL} characters`,
  "single-label-domain": "must have a domain with at least two labels after the @",
  "invalid-domain": "has an invalid domain",
};

/** Why `address` is not an acceptable addr-spec, or undefined when it is. Not trimmed: spaces are errors. */
export function emailProblem(address: string): string | undefined {
  return describeEmailFault(address, EMAIL_WORDING);
}

const MAX_NAME = 200;
const E164 = /^\+[1-9]\d{1,14}$/;
// Names end up in email headers, SMS text and calendar titles; control characters there
// are header/line injection, never a real name.
const CONTROL = /\p{Cc}/u;

function nameProblem(value: unknown): string | undefined {
  if (typeof value !== "string" || value.trim() === "") return "is required";
  // Code points, not UTF-16 units: a name in a non-Latin script should not get half the room.
  if ([...value].length > MAX_NAME) return `must be at most ${MAX_NAME} characters`;
  if (CONTROL.test(value)) return "must not contain control characters";
  return undefined;
}

/**
 * Checks a booking's attendee: email (see `emailProblem`), first and last name (non-blank,
 * at most 200 characters), optional phone in E.164 ("+" and up to 15 digits, no spaces)
 * and optional IANA time zone. Null and absent optional fields are fine; an empty string is
 * not (a phone's presence triggers an SMS, so it must be unambiguous). Fields are named
 * "attendee.email" etc.; returns [] when valid.
 */
export function validateAttendee(a: {
  email: string;
  firstName: string;
  lastName: string;
  phone?: string | null;
  timeZone?: string | null;
}): FieldError[] {
  const errors: FieldError[] = [];
  if (typeof a.email !== "string" || a.email === "") {
    errors.push({ field: "attendee.email", message: "is required" });
  } else {
    const why = emailProblem(a.email);
    if (why) errors.push({ field: "attendee.email", message: why });
  }
  for (const key of ["firstName", "lastName"] as const) {
    const why = nameProblem(a[key]);
    if (why) errors.push({ field: `attendee.${key}`, message: why });
  }
  if (a.phone !== undefined && a.phone !== null && (typeof a.phone !== "string" || !E164.test(a.phone))) {
    errors.push({ field: "attendee.phone", message: "must be an E.164 number such as +14155550123" });
  }
  if (a.timeZone !== undefined && a.timeZone !== null && (typeof a.timeZone !== "string" || !isIanaZone(a.timeZone))) {
    errors.push({ field: "attendee.timeZone", message: "must be an IANA time zone such as Europe/Berlin" });
  }
  return errors;
}

/**
 * Matches survey responses to questions. The API keys responses by question text, so a
 * response belongs to the question whose `label` equals its key exactly (question keys are
 * derived from the text and are not what clients send). Keys matching no label are listed in
 * `unknown` (the spec rejects them with 422 booking-validation-failed); required questions
 * without a non-blank answer, and answers that are not strings, are `errors` with field
 * `surveyResponses.<label>`.
 */
export function validateSurvey(
  questions: SurveyQuestion[],
  responses: Record<string, string>,
): { unknown: string[]; errors: FieldError[] } {
  const labels = new Set(questions.map((q) => q.label));
  const unknown = Object.keys(responses).filter((key) => !labels.has(key));
  const errors: FieldError[] = [];
  for (const q of questions) {
    const answer: unknown = Object.hasOwn(responses, q.label) ? responses[q.label] : undefined;
    const field = `surveyResponses.${q.label}`;
    if (answer !== undefined && answer !== null && typeof answer !== "string") {
      errors.push({ field, message: "must be a string" });
    } else if (q.required && (typeof answer !== "string" || answer.trim() === "")) {
      errors.push({ field, message: "is required" });
    }
  }
  return { unknown, errors };
}
