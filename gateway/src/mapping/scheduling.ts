import { fromJson, type MessageInitShape } from "@bufbuild/protobuf";
import { type Timestamp, type Value, ValueSchema } from "@bufbuild/protobuf/wkt";
import { iso } from "@platform/contracts/rest/json";
import type {
  BookMeetingRequestSchema,
  GetAvailabilityRequestSchema,
  GetAvailabilityResponse,
  HostRef,
  SmartSchedule,
} from "@platform/contracts/scheduling";
import { problem } from "@platform/kit/problems";
import { UTM_PARAMETERS } from "../schemas/scheduling-requests.js";
import { parseInstant } from "./time.js";

// The canonical Meeting JSON is shared with the webhook payloads (v2), so it lives in contracts.
export { meetingJson } from "@platform/contracts/rest/meeting";

// Fields the contract always sets: their absence is a service bug, so a plain Error, which
// the error handler logs and answers with an opaque 500.

export const hostRefJson = (h: HostRef) => ({ userId: h.userId, displayName: h.displayName });

/** A matching-form answer, as its schema admits it. */
type FormAnswer = string | number | boolean | string[];

export function smartScheduleSummaryJson(s: SmartSchedule) {
  return {
    id: s.id,
    name: s.name,
    description: s.description,
    status: s.status,
    durationMinutes: s.durationMinutes,
    timeZone: s.timeZone,
    ...(s.publishTime ? { publishedAt: iso(s.publishTime, "publish_time") } : {}),
    updatedAt: iso(s.updateTime, "update_time"),
  };
}

export function smartScheduleJson(s: SmartSchedule) {
  if (!s.bookingWindow) throw new Error("scheduling returned no booking_window");
  return {
    ...smartScheduleSummaryJson(s),
    bookingWindow: {
      minAdvanceMinutes: s.bookingWindow.minAdvanceMinutes,
      maxAdvanceDays: s.bookingWindow.maxAdvanceDays,
    },
    matchingForm: {
      fields: s.matchingFormFields.map((f) => ({
        key: f.key,
        label: f.label,
        type: f.type,
        options: f.options,
        required: f.required,
      })),
    },
    surveyQuestions: s.surveyQuestions.map((q) => ({ key: q.key, label: q.label, type: q.type, required: q.required })),
    assignees: s.assignees.map((h) => ({ host: hostRefJson(h) })),
  };
}

/** The body of POST /smart-schedules/{scheduleId}/availability, as its schema admits it. */
export interface AvailabilityBody {
  formValues: Record<string, FormAnswer>;
  dateRange?: { start: string; end: string };
  durationMinutes?: number;
  timeZone?: string;
  preview: boolean;
}

function formValueMap(values: Record<string, FormAnswer>): Record<string, Value> {
  return Object.fromEntries(Object.entries(values).map(([key, answer]) => [key, fromJson(ValueSchema, answer)]));
}

function rangeBound(body: AvailabilityBody, bound: "start" | "end"): Timestamp {
  const raw = body.dateRange?.[bound] ?? "";
  const instant = parseInstant(raw, { allowDate: false });
  if (!instant) {
    throw problem(
      "availability-request-invalid",
      `Field 'dateRange.${bound}' must be an ISO 8601 date-time with a zone, e.g. 2026-01-15T09:30:00Z.`,
      { field: `dateRange.${bound}` },
    );
  }
  return instant;
}

export function availabilityRequest(
  scheduleId: string,
  body: AvailabilityBody,
): MessageInitShape<typeof GetAvailabilityRequestSchema> {
  return {
    scheduleId,
    formValues: formValueMap(body.formValues),
    ...(body.dateRange ? { rangeStart: rangeBound(body, "start"), rangeEnd: rangeBound(body, "end") } : {}),
    ...(body.durationMinutes !== undefined ? { durationMinutes: body.durationMinutes } : {}),
    timeZone: body.timeZone ?? "",
    preview: body.preview,
    compactSlots: true,
    tokenParts: true,
  };
}

/** The availability response as an object: from a scheduling that answers one message per slot. */
export function availabilityJson(res: GetAvailabilityResponse) {
  return {
    hostGroups: res.hostGroups.map((group) =>
      group.hosts.map((h) => {
        if (!h.host) throw new Error("scheduling returned a host group entry without its host");
        return {
          host: hostRefJson(h.host),
          slots: h.slots.map((slot) => ({
            startTime: iso(slot.startTime, "start_time"),
            endTime: iso(slot.endTime, "end_time"),
            slotToken: slot.slotToken,
          })),
        };
      }),
    ),
    matchedAt: iso(res.matchTime, "match_time"),
  };
}

/** The body of POST /scheduled-meetings, as its schema admits it. */
export interface BookingBody {
  slotToken: string;
  attendee: { firstName: string; lastName: string; email: string; phone?: string | null; timeZone?: string | null };
  formValues: Record<string, FormAnswer>;
  surveyResponses?: Record<string, string>;
  additionalAttendees?: string[];
}

export type BookingQuery = { [K in keyof typeof UTM_PARAMETERS]?: string };

export function bookingRequest(
  body: BookingBody,
  query: BookingQuery,
): MessageInitShape<typeof BookMeetingRequestSchema> {
  const { phone, timeZone, ...names } = body.attendee;
  const campaign = Object.fromEntries(
    Object.entries(UTM_PARAMETERS).flatMap(([param, member]) => {
      const value = query[param as keyof BookingQuery];
      return value === undefined ? [] : [[member, value]];
    }),
  );
  return {
    slotToken: body.slotToken,
    // Proto3 optional strings have no null: null and absent both leave them unset.
    attendee: { ...names, ...(phone != null ? { phone } : {}), ...(timeZone != null ? { timeZone } : {}) },
    formValues: formValueMap(body.formValues),
    surveyResponses: body.surveyResponses ?? {},
    additionalAttendees: body.additionalAttendees ?? [],
    ...(Object.keys(campaign).length > 0 ? { campaign } : {}),
  };
}

/** The body of PATCH /scheduled-meetings/{meetingId}, as its schema admits it. */
export interface RescheduleBody {
  slotToken: string;
  reason?: string;
}

/** The query of DELETE /scheduled-meetings/{meetingId}, after its schema's defaults. */
export interface CancelQuery {
  sendNotifications: boolean;
  reason?: string;
}
