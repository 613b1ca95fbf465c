import { closedObject, nullable, strictObject, timestamp } from "./common.js";
import { formValues } from "./scheduling.js";

// The bodies and queries of scheduling's writes: availability, booking, reschedule, cancel.

/** POST /smart-schedules/{scheduleId}/availability; a body failing it is 422 availability-request-invalid. */
export const availabilityRequestSchema = strictObject(
  {
    formValues,
    dateRange: closedObject(
      {
        start: { ...timestamp, description: "ISO 8601 date-time with a zone" },
        end: { ...timestamp, description: "ISO 8601 date-time with a zone" },
      },
      { description: "Inclusive; the schedule's booking window when omitted" },
    ),
    durationMinutes: {
      type: "integer",
      minimum: 1,
      // The contract's int32: a larger number could not even be sent to the service.
      maximum: 2_147_483_647,
      description: "One of the schedule's booking periods (never snapped); the schedule's default when omitted",
    },
    timeZone: { type: "string", description: "IANA zone; informational, slots are always UTC" },
    preview: { type: "boolean", default: false, description: "Slot tokens carry the preview flag" },
  },
  { required: ["formValues"] },
);

/** POST /scheduled-meetings. Email, phone and zone values are judged by the service (422 form-validation). */
export const bookingRequestSchema = strictObject(
  {
    slotToken: { type: "string", description: "From availability; encodes schedule, host, start and end" },
    attendee: strictObject(
      {
        firstName: { type: "string" },
        lastName: { type: "string" },
        email: { type: "string", format: "email", description: "RFC 5322 addr-spec" },
        phone: nullable("string", "E.164; an SMS confirmation is sent when present, none when absent"),
        timeZone: nullable("string", "IANA zone"),
      },
      { required: ["firstName", "lastName", "email"] },
    ),
    formValues: { ...formValues, description: "Must equal the values the slot token was issued for" },
    surveyResponses: {
      type: "object",
      description: "Question text → free-text answer; an unknown question is 422",
      additionalProperties: { type: "string" },
    },
    additionalAttendees: {
      type: "array",
      maxItems: 50,
      items: { type: "string", format: "email" },
      description: "Extra attendee emails",
    },
  },
  { required: ["slotToken", "attendee", "formValues"] },
);

/** The UTM parameters a booking records as its campaign, by the campaign member each fills. */
export const UTM_PARAMETERS = {
  utm_id: "id",
  utm_source: "source",
  utm_medium: "medium",
  utm_campaign: "campaign",
  utm_term: "term",
  utm_content: "content",
} as const;

export const bookingQuerySchema = {
  type: "object",
  properties: Object.fromEntries(
    Object.entries(UTM_PARAMETERS).map(([name, member]) => [
      name,
      { type: "string", description: `Recorded as smartScheduling.campaign.${member}` },
    ]),
  ),
} as const;

/** PATCH /scheduled-meetings/{meetingId}. */
export const rescheduleRequestSchema = strictObject(
  {
    slotToken: { type: "string", description: "A slot token of the same schedule; may be another host's" },
    reason: { type: "string", description: "Kept in the audit trail and sent in the reschedule event" },
  },
  { required: ["slotToken"] },
);

/** DELETE /scheduled-meetings/{meetingId}. */
export const cancelQuerySchema = {
  type: "object",
  properties: {
    sendNotifications: {
      type: "boolean",
      default: true,
      description: "false suppresses the cancellation email and SMS",
    },
    reason: { type: "string", maxLength: 500, description: "Why; sent in the cancel event" },
  },
} as const;
