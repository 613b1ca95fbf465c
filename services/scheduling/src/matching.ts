import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { GetAvailabilityRequest } from "@platform/contracts/scheduling";
import { problem } from "@platform/kit/problems";
import { IANAZone } from "luxon";
import { formValuesOf, hostCalendar } from "./booking.js";
import { hostSlots } from "./domain/availability.js";
import { searchRange } from "./domain/booking-window.js";
import { assertValidFormValues, formValuesHash } from "./domain/form.js";
import { routeHosts } from "./domain/routing.js";
import { signSlotToken, slotTokenExpiresAt } from "./domain/slot-token.js";
import type { FormAnswer, TimeRange } from "./domain/types.js";
import type { HostRecord, ScheduleRecord } from "./model.js";
import type { SchedulingReads } from "./store/scheduling.store.js";

// Availability: an availability request checked against its schedule, routed to host groups,
// and each routed host's free slots signed into slot tokens.

const invalidRequest = (detail: string) => problem("availability-request-invalid", detail);

/** What an availability request asks for, once checked. */
export interface AvailabilityQuery {
  durationMinutes: number;
  /** The requested date range; undefined for the whole booking window. */
  requested: TimeRange | undefined;
  values: Record<string, FormAnswer>;
  preview: boolean;
}

/** The date range a request asks for; a missing bound is open (the booking window bounds it). */
function requestedRange(start: Date | undefined, end: Date | undefined): TimeRange | undefined {
  if (!start && !end) return undefined;
  if (start && end && start.getTime() > end.getTime()) throw invalidRequest("dateRange.start is after dateRange.end.");
  // The widest instants a Date can hold stand for "unbounded": searchRange intersects with the window.
  return { start: start ?? new Date(-8.64e15), end: end ?? new Date(8.64e15) };
}

/**
 * Checks a request against its schedule: the duration is one of its booking periods (never
 * snapped), the range is not inverted, the zone is IANA, and the form values fit its form
 * (422 form-validation with fieldErrors otherwise).
 */
export function availabilityQuery(schedule: ScheduleRecord, req: GetAvailabilityRequest): AvailabilityQuery {
  const durationMinutes = req.durationMinutes ?? schedule.durationMinutes;
  if (!schedule.bookingPeriods.includes(durationMinutes)) {
    throw invalidRequest(
      `durationMinutes must be one of the schedule's booking periods: ${schedule.bookingPeriods.join(", ")}.`,
    );
  }
  if (req.timeZone !== "" && !IANAZone.isValidZone(req.timeZone)) {
    throw invalidRequest(`timeZone '${req.timeZone}' is not an IANA time zone.`);
  }
  const requested = requestedRange(
    req.rangeStart && timestampDate(req.rangeStart),
    req.rangeEnd && timestampDate(req.rangeEnd),
  );
  const values = formValuesOf(req.formValues);
  assertValidFormValues(schedule.matchingForm, values);
  // Valid values are answers: the validation checked each one's type.
  return { durationMinutes, requested, values: values as Record<string, FormAnswer>, preview: req.preview };
}

/** A slot with the token that books it. */
export interface SignedSlot extends TimeRange {
  token: string;
}

/**
 * The host groups the form values route to, most preferred first, each host with its signed
 * free slots in the booking window at `now` (within the requested range). Routed users who
 * are no longer assigned are skipped. Busy time of every routed host comes in one query.
 */
export async function matchHosts(
  reads: SchedulingReads,
  schedule: ScheduleRecord,
  query: AvailabilityQuery,
  opts: { orgId: string; slotTokenSecret: string; now: Date },
): Promise<{ host: HostRecord; slots: SignedSlot[] }[][]> {
  const assignees = new Map((await reads.listAssignees(schedule.id)).map((h) => [h.userId, h]));
  const groups = routeHosts(schedule.routing, query.values)
    .map((group) => group.flatMap((userId) => assignees.get(userId) ?? []))
    .filter((group) => group.length > 0);
  const range = searchRange(schedule.bookingWindow, opts.now, query.requested);
  if (!range) return groups.map((group) => group.map((host) => ({ host, slots: [] })));
  const busy = await reads.busyTimes(
    groups.flat().map((h) => h.userId),
    range,
  );
  const token = {
    orgId: opts.orgId,
    scheduleId: schedule.id,
    expiresAt: slotTokenExpiresAt(opts.now),
    preview: query.preview,
    formValuesHash: formValuesHash(query.values),
  };
  return groups.map((group) =>
    group.map((host) => {
      const slots = hostSlots({
        host: hostCalendar(host, busy.get(host.userId) ?? []),
        range,
        durationMinutes: query.durationMinutes,
        stepMinutes: schedule.stepMinutes,
      });
      return {
        host,
        slots: slots.map((slot) => ({
          ...slot,
          token: signSlotToken(
            { ...token, hostUserId: host.userId, start: slot.start.toISOString(), end: slot.end.toISOString() },
            opts.slotTokenSecret,
          ),
        })),
      };
    }),
  );
}
