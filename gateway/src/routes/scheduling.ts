import type { ProblemName } from "@platform/kit/problems";
import { BodyBuffers } from "../http/body-buffers.js";
import { availabilityBody, isCompactAvailability } from "../mapping/availability-body.js";
import {
  type AvailabilityBody,
  availabilityJson,
  availabilityRequest,
  type BookingBody,
  type BookingQuery,
  bookingRequest,
  type CancelQuery,
  meetingJson,
  type RescheduleBody,
  smartScheduleJson,
  smartScheduleSummaryJson,
} from "../mapping/scheduling.js";
import { defineRoute, type RouteSpec } from "../route.js";
import type { JsonSchema } from "../schemas/common.js";
import { pageQuery } from "../schemas/pagination.js";
import {
  availabilitySchema,
  availableSlotSchema,
  meetingSchema,
  smartScheduleSchema,
  smartScheduleSummarySchema,
} from "../schemas/scheduling.js";
import {
  availabilityRequestSchema,
  bookingQuerySchema,
  bookingRequestSchema,
  cancelQuerySchema,
  rescheduleRequestSchema,
} from "../schemas/scheduling-requests.js";
import type { ServiceClients } from "../services.js";
import { getById, listOf, readerFrom, requiredFrom, textFilters } from "./shared.js";

const meeting = { $ref: "Meeting#" };

const schedulesPage = pageQuery(["updatedAt", "createdAt", "name"], "-updatedAt", {
  name: { type: "string", description: "Case-insensitive substring of the name" },
  // Judged by scheduling, so a bad value is its 400 invalid-filter, not a schema error here.
  status: { type: "string", default: "active", description: "active, or all (active and disabled); never drafts" },
});

const BOOKING_PROBLEMS: ProblemName[] = [
  "slot-conflict",
  "slot-token-expired",
  "slot-token-invalid",
  "form-validation",
  "booking-validation-failed",
];

// A response without the resource it exists for is a service bug: a plain Error, which the
// error handler logs and answers with an opaque 500.
const required = requiredFrom("scheduling");
const read = readerFrom("scheduling");

/** The Smart Schedule and scheduled-meeting endpoints scheduling serves. */
export function routes({ scheduling: clients }: ServiceClients): RouteSpec[] {
  const bodyBuffers = new BodyBuffers();
  const smartSchedules: RouteSpec[] = [
    defineRoute({
      url: "/smart-schedules",
      operationId: "listSmartSchedules",
      summary: "List Smart Schedules (summaries; drafts never)",
      tag: "Smart Schedules",
      scope: "smart-scheduling:read",
      ...listOf(schedulesPage, "SmartScheduleSummary", {
        list: (page, q: { name?: string; status: string }, options) =>
          clients.smartSchedules.listSmartSchedules({ ...page, ...textFilters(q, "name"), status: q.status }, options),
        items: (res) => res.schedules,
        toJson: smartScheduleSummaryJson,
      }),
    }),
    defineRoute({
      url: "/smart-schedules/:scheduleId",
      operationId: "getSmartSchedule",
      summary: "One Smart Schedule (detail view, with its form and hosts)",
      tag: "Smart Schedules",
      scope: "smart-scheduling:read",
      problems: ["schedule-not-found"],
      ...getById(
        "scheduleId",
        "sched_",
        "SmartSchedule",
        read(clients.smartSchedules.getSmartSchedule, "schedule", smartScheduleJson),
      ),
    }),
    defineRoute({
      method: "POST",
      url: "/smart-schedules/:scheduleId/availability",
      operationId: "getAvailability",
      summary: "Route the form values to hosts and list their bookable slots",
      tag: "Smart Schedules",
      scope: "smart-scheduling:read",
      tier: "availability",
      ids: { scheduleId: "sched_" },
      schema: { body: availabilityRequestSchema, response: { 200: { $ref: "Availability#" } } },
      invalidBody: "availability-request-invalid",
      problems: ["schedule-not-found", "form-validation", "schedule-unavailable"],
      async handler(call, request, reply) {
        const { scheduleId } = request.params as { scheduleId: string };
        const res = await clients.smartSchedules.getAvailability(
          availabilityRequest(scheduleId, request.body as AvailabilityBody),
          call.callOptions(),
        );
        // A scheduling of before the compact form answers one message per slot.
        if (!isCompactAvailability(res)) return availabilityJson(res);
        reply.type("application/json; charset=utf-8");
        return availabilityBody(res, (size) => bodyBuffers.take(size, reply.raw));
      },
    }),
  ];

  const meetings: RouteSpec[] = [
    defineRoute({
      method: "POST",
      url: "/scheduled-meetings",
      operationId: "bookMeeting",
      summary: "Book the slot of a slot token (UTM query parameters become the campaign)",
      tag: "Scheduled meetings",
      scope: "smart-scheduling:write",
      tier: "write",
      idempotencyKey: "required",
      schema: { querystring: bookingQuerySchema, body: bookingRequestSchema, response: { 201: meeting } },
      problems: BOOKING_PROBLEMS,
      async handler(call, request, reply) {
        const res = await clients.meetings.bookMeeting(
          bookingRequest(request.body as BookingBody, request.query as BookingQuery),
          call.callOptions(),
        );
        reply.code(201);
        return meetingJson(required(res.meeting, "meeting"));
      },
    }),
    defineRoute({
      url: "/scheduled-meetings/:meetingId",
      operationId: "getMeeting",
      summary: "One meeting",
      tag: "Scheduled meetings",
      scope: "smart-scheduling:read",
      problems: ["meeting-not-found"],
      ...getById("meetingId", "mtg_", "Meeting", read(clients.meetings.getMeeting, "meeting", meetingJson)),
    }),
    defineRoute({
      method: "PATCH",
      url: "/scheduled-meetings/:meetingId",
      operationId: "rescheduleMeeting",
      summary: "Move a meeting to another slot of its schedule (possibly another host)",
      tag: "Scheduled meetings",
      scope: "smart-scheduling:write",
      tier: "write",
      idempotencyKey: "required",
      ids: { meetingId: "mtg_" },
      schema: { body: rescheduleRequestSchema, response: { 200: meeting } },
      notWritable: {
        attendee: "The attendee cannot change on a reschedule; cancel the meeting and book a new one instead.",
      },
      problems: [...BOOKING_PROBLEMS, "meeting-not-found", "meeting-not-reschedulable", "schedule-mismatch"],
      async handler(call, request) {
        const { meetingId } = request.params as { meetingId: string };
        const body = request.body as RescheduleBody;
        const res = await clients.meetings.rescheduleMeeting(
          { meetingId, slotToken: body.slotToken, reason: body.reason ?? "" },
          call.callOptions(),
        );
        return meetingJson(required(res.meeting, "meeting"));
      },
    }),
    defineRoute({
      method: "DELETE",
      url: "/scheduled-meetings/:meetingId",
      operationId: "cancelMeeting",
      summary: "Cancel a meeting (repeating it changes nothing and sends nothing)",
      tag: "Scheduled meetings",
      scope: "smart-scheduling:write",
      tier: "write",
      ids: { meetingId: "mtg_" },
      schema: {
        querystring: cancelQuerySchema,
        response: { 204: { type: "null", description: "Canceled, now or before" } },
      },
      problems: ["meeting-not-found", "meeting-completed"],
      async handler(call, request, reply) {
        const { meetingId } = request.params as { meetingId: string };
        const query = request.query as CancelQuery;
        await clients.meetings.cancelMeeting(
          { meetingId, sendNotifications: query.sendNotifications, reason: query.reason ?? "" },
          call.callOptions(),
        );
        return reply.code(204).send();
      },
    }),
  ];

  return [...smartSchedules, ...meetings];
}

export const schemas: readonly JsonSchema[] = [
  smartScheduleSummarySchema,
  smartScheduleSchema,
  availableSlotSchema,
  availabilitySchema,
  meetingSchema,
];
