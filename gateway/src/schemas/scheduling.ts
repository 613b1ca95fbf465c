import { closedObject, nullable, orNull, timestamp } from "./common.js";

const hostRef = {
  type: "object",
  description: "Lightweight host reference",
  required: ["userId", "displayName"],
  properties: { userId: { type: "string", description: "usr_ id" }, displayName: { type: "string" } },
  additionalProperties: false,
} as const;

/** matchingForm key → answer, as availability and booking take them. */
export const formValues = {
  type: "object",
  description: "matchingForm key → string, number, boolean, or array of strings (multi-select)",
  // One type list rather than anyOf, so a bad answer fails with one message naming them all.
  additionalProperties: { type: ["string", "number", "boolean", "array"], items: { type: "string" } },
} as const;

/**
 * A recorded answer. The serializer writes a type list by the first type it can coerce the
 * value to (a list would become "a,b"), so the response says anyOf, which it checks in turn.
 */
const formAnswer = {
  anyOf: [{ type: "string" }, { type: "number" }, { type: "boolean" }, { type: "array", items: { type: "string" } }],
  description: "A scalar, or the chosen options of a multi-select",
} as const;

const summaryProperties = {
  id: { type: "string", description: "sched_ id" },
  name: { type: "string" },
  description: { type: "string" },
  status: { type: "string", enum: ["active", "disabled"], description: "Drafts are never returned" },
  durationMinutes: { type: "integer", description: "Default meeting length" },
  timeZone: { type: "string", description: "IANA zone the schedule is anchored to" },
  publishedAt: {
    ...timestamp,
    description: "Best effort: a lower bound of the publication time; omitted when unpublished",
  },
  updatedAt: timestamp,
} as const;

const summaryRequired = ["id", "name", "description", "status", "durationMinutes", "timeZone", "updatedAt"];

export const smartScheduleSummarySchema = {
  $id: "SmartScheduleSummary",
  type: "object",
  description: "A Smart Schedule in a list",
  required: summaryRequired,
  properties: summaryProperties,
  additionalProperties: false,
} as const;

export const smartScheduleSchema = {
  $id: "SmartSchedule",
  type: "object",
  description: "A Smart Schedule (detail view): the summary plus its booking rules",
  required: [...summaryRequired, "bookingWindow", "matchingForm", "surveyQuestions", "assignees"],
  properties: {
    ...summaryProperties,
    bookingWindow: {
      type: "object",
      required: ["minAdvanceMinutes", "maxAdvanceDays"],
      properties: {
        minAdvanceMinutes: { type: "integer", description: "Minimum notice" },
        maxAdvanceDays: { type: "integer", description: "Furthest day ahead" },
      },
      additionalProperties: false,
    },
    matchingForm: {
      type: "object",
      description: "Drives host routing",
      required: ["fields"],
      properties: {
        fields: {
          type: "array",
          items: {
            type: "object",
            required: ["key", "label", "type", "options", "required"],
            properties: {
              key: { type: "string", description: "Stable id; formValues are keyed by it" },
              label: { type: "string" },
              type: { type: "string", description: "select, multi-select, text, number or boolean" },
              options: { type: "array", items: { type: "string" }, description: "Choices of a select" },
              required: { type: "boolean" },
            },
            additionalProperties: false,
          },
        },
      },
      additionalProperties: false,
    },
    surveyQuestions: {
      type: "array",
      description: "Informational; surveyResponses are keyed by the question text (label)",
      items: {
        type: "object",
        required: ["key", "label", "type", "required"],
        properties: {
          key: { type: "string", description: "Derived from the question text: a renamed question changes it" },
          label: { type: "string", description: "The question text" },
          type: { type: "string", description: "long-text or text" },
          required: { type: "boolean" },
        },
        additionalProperties: false,
      },
    },
    assignees: {
      type: "array",
      description: "Flat and unordered",
      items: { type: "object", required: ["host"], properties: { host: hostRef }, additionalProperties: false },
    },
  },
  additionalProperties: false,
} as const;

export const availableSlotSchema = {
  $id: "AvailableSlot",
  type: "object",
  required: ["startTime", "endTime", "slotToken"],
  properties: {
    startTime: { ...timestamp, description: "UTC" },
    endTime: { ...timestamp, description: "UTC; startTime plus the effective duration" },
    slotToken: {
      type: "string",
      description: "Opaque and signed, valid for 10 minutes; book with it as it is, never parse or build one",
    },
  },
  additionalProperties: false,
} as const;

export const availabilitySchema = {
  $id: "Availability",
  type: "object",
  required: ["hostGroups", "matchedAt"],
  properties: {
    hostGroups: {
      type: "array",
      description: "Priority groups, index 0 most preferred; each an array of equally ranked hosts",
      items: {
        type: "array",
        items: {
          type: "object",
          required: ["host", "slots"],
          properties: { host: hostRef, slots: { type: "array", items: { $ref: "AvailableSlot#" } } },
          additionalProperties: false,
        },
      },
    },
    matchedAt: { ...timestamp, description: "When the match was computed" },
  },
  additionalProperties: false,
} as const;

const campaign = {
  type: ["object", "null"],
  description: "UTM parameters of the booking request (each null when absent); null when it had none",
  required: ["id", "source", "medium", "campaign", "term", "content"],
  properties: {
    id: nullable("string", "utm_id"),
    source: nullable("string", "utm_source"),
    medium: nullable("string", "utm_medium"),
    campaign: nullable("string", "utm_campaign"),
    term: nullable("string", "utm_term"),
    content: nullable("string", "utm_content"),
  },
  additionalProperties: false,
} as const;

export const meetingSchema = closedObject(
  {
    id: { type: "string", description: "mtg_ id; stable across reschedules" },
    orgId: { type: "string", description: "org_ id" },
    host: closedObject(
      {
        userId: { type: "string", description: "usr_ id" },
        email: { type: "string", format: "email" },
        firstName: { type: "string" },
        lastName: { type: "string" },
        displayName: { type: "string" },
      },
      { description: "The host (the new one after a host swap)" },
    ),
    attendee: closedObject(
      {
        email: { type: "string", format: "email" },
        firstName: { type: "string" },
        lastName: { type: "string" },
        phone: nullable("string", "E.164; null when none (then no SMS)"),
        timeZone: nullable("string", "IANA zone; null when none"),
      },
      { description: "Never changed by a reschedule" },
    ),
    additionalAttendees: {
      type: "array",
      items: { type: "string", format: "email" },
      maxItems: 50,
      description: "Emails; empty when none",
    },
    title: { type: "string" },
    startTime: { ...timestamp, description: "UTC" },
    endTime: { ...timestamp, description: "UTC" },
    timeZone: { type: "string", description: "IANA zone the schedule is anchored to; informational" },
    location: orNull(
      closedObject(
        {
          type: { type: "string", enum: ["video", "phone", "in-person", "custom"] },
          provider: { type: ["string", "null"], enum: ["video_a", "video_b", "video_c", null] },
          joinUrl: { type: ["string", "null"], format: "uri" },
          address: { type: ["string", "null"] },
        },
        {
          description:
            "Where the meeting happens; null when none. All four members are always present, null where they do not apply: provider for video only, joinUrl for video or a custom location with a URL, address for in-person, phone or custom free text.",
        },
      ),
    ),
    conferencing: orNull(
      closedObject(
        {
          provider: { type: "string", enum: ["video_a", "video_b", "video_c"] },
          providerMeetingId: { type: "string" },
        },
        { description: "The video meeting at its provider; null when none" },
      ),
    ),
    calendarEventId: nullable("string", "The provider's calendar event id; null when none"),
    status: {
      type: "string",
      enum: ["scheduled", "completed", "canceled", "rescheduled", "no-show"],
      description:
        "Derived from the clock and the cancellation, so a cached copy may be stale; rescheduled and no-show are reserved and never sent",
    },
    createdAt: { ...timestamp, description: "Unchanged by reschedules" },
    updatedAt: { ...timestamp, description: "Bumps on every change" },
    smartScheduling: orNull(
      closedObject(
        {
          scheduleId: { type: "string", description: "sched_ id" },
          formValues: {
            type: "array",
            description: "The matching-form answers used for routing",
            items: closedObject({ key: { type: "string" }, answer: formAnswer }),
          },
          surveyResponses: {
            type: "array",
            items: closedObject({ question: { type: "string" }, answer: { type: "string" } }),
          },
          rescheduleUrl: { type: "string", format: "uri" },
          cancelUrl: { type: "string", format: "uri" },
          campaign,
          preview: { type: "boolean", description: "true when booked from a preview slot token" },
        },
        { description: "How a Smart Schedule booking came about; null when not booked through one" },
      ),
    ),
    personalScheduling: { type: "null", description: "Personal scheduling bookings; not served in this version" },
    teamScheduling: { type: "null", description: "Team scheduling bookings; not served in this version" },
    meetingAi: { type: "null", description: "Schema undefined; always null today" },
  },
  {
    id: "Meeting",
    description:
      "The canonical meeting (also the v2 webhook payload). smartScheduling, personalScheduling, teamScheduling and meetingAi are always present, null when they do not apply.",
  },
);
