import type { BookingWindow, TimeRange } from "./model.js";

const MINUTE_MS = 60_000;
// maxAdvanceDays counts elapsed 24-hour days from now, not calendar days of some zone: the
// window has no zone of its own, and a fixed length keeps it identical for every host.
const DAY_MS = 24 * 60 * MINUTE_MS;

/** The [earliest start, latest end] the booking window allows at `now`. */
export function windowRange(window: BookingWindow, now: Date): TimeRange {
  return {
    start: new Date(now.getTime() + window.minAdvanceMinutes * MINUTE_MS),
    end: new Date(now.getTime() + window.maxAdvanceDays * DAY_MS),
  };
}

/**
 * Whether `slot` lies inside `range`: start >= range.start and end <= range.end. This is how
 * every range in this folder is read, and it is also what makes the API's inclusive
 * `dateRange.end` work without adjustment: a slot ending exactly at `end` is offered, one
 * ending a moment later is not. (Adding 1 ms to the end would change nothing for slots, whose
 * bounds are whole minutes, so it is not done.)
 */
export function rangeContains(range: TimeRange, slot: TimeRange): boolean {
  return slot.start.getTime() >= range.start.getTime() && slot.end.getTime() <= range.end.getTime();
}

/**
 * The range to search for slots: the booking window at `now` (earliest start = now +
 * minAdvanceMinutes, latest end = now + maxAdvanceDays), intersected with the requested
 * `dateRange` when one is given. Read it with `rangeContains`. Undefined when nothing of
 * positive length is left (including a requested range that is inverted or outside the window).
 */
export function searchRange(window: BookingWindow, now: Date, requested?: TimeRange): TimeRange | undefined {
  const allowed = windowRange(window, now);
  const start = Math.max(allowed.start.getTime(), requested?.start.getTime() ?? Number.NEGATIVE_INFINITY);
  const end = Math.min(allowed.end.getTime(), requested?.end.getTime() ?? Number.POSITIVE_INFINITY);
  if (!Number.isFinite(start) || !Number.isFinite(end) || start >= end) return undefined;
  return { start: new Date(start), end: new Date(end) };
}

/** Whether a slot may still be booked at `now` (re-checked at booking, when time has moved on). */
export function isWithinWindow(window: BookingWindow, now: Date, slot: TimeRange): boolean {
  return rangeContains(windowRange(window, now), slot);
}
