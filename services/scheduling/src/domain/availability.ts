import { DateTime, IANAZone } from "luxon";
import type { FieldError, HostCalendar, TimeRange, WorkingHours } from "./model.js";
import { isIanaZone } from "./time-zone.js";

const MINUTE_MS = 60_000;
const CLOCK_TIME = /^([01]\d|2[0-3]):([0-5]\d)$/;

interface ClockTime {
  hour: number;
  minute: number;
  /** "24:00": the start of the next day. */
  endOfDay: boolean;
}

function parseClockTime(value: string, allowEndOfDay: boolean): ClockTime | undefined {
  if (allowEndOfDay && value === "24:00") return { hour: 0, minute: 0, endOfDay: true };
  const match = CLOCK_TIME.exec(value);
  if (!match) return undefined;
  return { hour: Number(match[1]), minute: Number(match[2]), endOfDay: false };
}

interface ParsedBlock {
  start: ClockTime;
  end: ClockTime;
}

/** Problems with working hours as configured (times not "HH:MM", end not after start). */
export function validateWorkingHours(hours: WorkingHours[]): FieldError[] {
  const errors: FieldError[] = [];
  hours.forEach((h, i) => {
    const field = `workingHours[${i}]`;
    if (!Number.isInteger(h.weekday) || h.weekday < 1 || h.weekday > 7) {
      errors.push({ field: `${field}.weekday`, message: "must be an ISO weekday, 1 (Monday) to 7" });
    }
    const start = parseClockTime(h.start, false);
    const end = parseClockTime(h.end, true);
    if (!start) errors.push({ field: `${field}.start`, message: 'must be a time "HH:MM" from 00:00 to 23:59' });
    if (!end) errors.push({ field: `${field}.end`, message: 'must be a time "HH:MM" from 00:01 to 24:00' });
    if (start && end && !end.endOfDay && end.hour * 60 + end.minute <= start.hour * 60 + start.minute) {
      errors.push({ field: `${field}.end`, message: "must be after start" });
    }
  });
  return errors;
}

function parseWorkingHours(hours: WorkingHours[]): Map<number, ParsedBlock[]> {
  const errors = validateWorkingHours(hours);
  if (errors.length > 0) {
    // Working hours are validated when they are saved; reaching this is a data bug, not a client error.
    throw new RangeError(`invalid working hours: ${errors.map((e) => `${e.field} ${e.message}`).join("; ")}`);
  }
  const byWeekday = new Map<number, ParsedBlock[]>();
  for (const h of hours) {
    const block = { start: parseClockTime(h.start, false)!, end: parseClockTime(h.end, true)! };
    byWeekday.set(h.weekday, [...(byWeekday.get(h.weekday) ?? []), block]);
  }
  return byWeekday;
}

interface CalendarDate {
  year: number;
  month: number;
  day: number;
}

/**
 * The instant a wall-clock time on a calendar date has in `zone`, resolved the way RFC 5545
 * (§3.3.5) and Temporal's "compatible" mode do: a time skipped by a spring-forward gap is
 * moved forward by the gap's length (Luxon's own behaviour), and a time that occurs twice on
 * a fall-back day is its EARLIER occurrence. The second rule has to be applied here: left to
 * itself, Luxon resolves a repeated time with the offset the zone has at the current date,
 * so the same schedule would give different slots in January and in July.
 */
function wallClockInstant(zone: string, date: CalendarDate, time: ClockTime): number {
  const base = DateTime.fromObject(
    { year: date.year, month: date.month, day: date.day, hour: time.hour, minute: time.minute },
    { zone },
  );
  const local = time.endOfDay ? base.plus({ days: 1 }) : base;
  return Math.min(...local.getPossibleOffsets().map((d) => d.toMillis()));
}

/** Zones found valid: Luxon's check builds an Intl.DateTimeFormat on every call. */
const validZones = new Set<string>();

function assertZone(zone: string): void {
  if (validZones.has(zone)) return;
  if (!isIanaZone(zone)) throw new RangeError(`invalid IANA time zone: ${zone}`);
  if (validZones.size < 1_000) validZones.add(zone);
}

/**
 * The working blocks of `host` that touch `range`, as UTC ranges, in order. Days are walked
 * as calendar dates in the host's zone and each block is built from its wall-clock times,
 * so a 09:00–17:00 block is 8 local hours on every day, DST transitions included; a block
 * spanning a transition is as long as the wall clock says (7 or 9 real hours for 00:00–08:00).
 */
export function workingBlocks(host: HostCalendar, range: TimeRange): TimeRange[] {
  assertZone(host.timeZone);
  if (range.end.getTime() <= range.start.getTime()) return [];
  const byWeekday = parseWorkingHours(host.workingHours);
  // A block never starts before its local date's midnight nor ends after the next one, so the
  // local dates of the range's two ends bound the dates that can contribute.
  const first = DateTime.fromJSDate(range.start, { zone: host.timeZone });
  const last = DateTime.fromJSDate(range.end, { zone: host.timeZone });
  // The calendar is walked in UTC, where every day has 24 hours and midnight always exists;
  // only the date components are used, the weekday of a date being the same in every zone.
  let cursor = DateTime.utc(first.year, first.month, first.day);
  const stop = DateTime.utc(last.year, last.month, last.day);
  const blocks: TimeRange[] = [];
  while (cursor <= stop) {
    const date = { year: cursor.year, month: cursor.month, day: cursor.day };
    for (const block of byWeekday.get(cursor.weekday) ?? []) {
      const start = wallClockInstant(host.timeZone, date, block.start);
      const end = wallClockInstant(host.timeZone, date, block.end);
      // A block lying wholly inside a spring-forward gap collapses to nothing.
      if (end <= start) continue;
      if (end <= range.start.getTime() || start >= range.end.getTime()) continue;
      blocks.push({ start: new Date(start), end: new Date(end) });
    }
    cursor = cursor.plus({ days: 1 });
  }
  return blocks.sort((a, b) => a.start.getTime() - b.start.getTime());
}

/** Busy ranges sorted and merged into disjoint [start, end) intervals (ms), empty ones dropped. */
function mergeBusy(busy: TimeRange[]): Array<[number, number]> {
  const sorted = busy
    .map((b): [number, number] => [b.start.getTime(), b.end.getTime()])
    .filter(([s, e]) => e > s)
    .sort((a, b) => a[0] - b[0]);
  const merged: Array<[number, number]> = [];
  for (const [s, e] of sorted) {
    const prev = merged.at(-1);
    if (prev && s < prev[1]) prev[1] = Math.max(prev[1], e);
    else merged.push([s, e]);
  }
  return merged;
}

/** Whether [start, end) overlaps any merged busy interval (half-open: touching is not overlapping). */
function overlapsBusy(merged: Array<[number, number]>, start: number, end: number): boolean {
  // Binary search for the first interval ending after `start`; only it can overlap first.
  let lo = 0;
  let hi = merged.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (merged[mid]![1] <= start) lo = mid + 1;
    else hi = mid;
  }
  const candidate = merged[lo];
  return candidate !== undefined && candidate[0] < end;
}

function assertPositiveMinutes(name: string, value: number): void {
  if (!Number.isInteger(value) || value <= 0) {
    throw new RangeError(`${name} must be a positive whole number of minutes`);
  }
}

const DAY_MS = 86_400_000;

/**
 * A zone's UTC offsets (minutes) at UTC midnights, by day number (days since 1970-01-01):
 * Intl, which Luxon asks, costs microseconds per call, and tzdata does not change while the
 * process runs. Bounded by clearing: entries are a few per zone and day ever asked for.
 */
const midnightOffsets = new Map<string, Map<number, number>>();
let midnightOffsetCount = 0;
const MAX_MIDNIGHT_OFFSETS = 200_000;

function offsetAtMidnight(zone: IANAZone, day: number): number {
  let byDay = midnightOffsets.get(zone.name);
  if (!byDay) {
    byDay = new Map();
    midnightOffsets.set(zone.name, byDay);
  }
  let offset = byDay.get(day);
  if (offset === undefined) {
    if (midnightOffsetCount >= MAX_MIDNIGHT_OFFSETS) {
      midnightOffsets.clear();
      midnightOffsetCount = 0;
      return offsetAtMidnight(zone, day);
    }
    offset = zone.offset(day * DAY_MS);
    byDay.set(day, offset);
    midnightOffsetCount++;
  }
  return offset;
}

/**
 * The zone's offset on local date `day` when it is certainly the same all that day, else
 * undefined (a transition may fall on it: the caller then resolves wall-clock times with
 * `wallClockInstant`). Local times of a date, 00:00 to 24:00, are instants within
 * [day − 14 h, day + 1 + 12 h] in UTC, inside [day − 1, day + 2] UTC midnights; the offset is
 * taken as steady when it is the same at those four midnights. That misses only a zone that
 * changes its offset and changes it back within 24 hours, which no zone in tzdata does.
 */
function steadyOffset(zone: IANAZone, day: number): number | undefined {
  const offset = offsetAtMidnight(zone, day);
  return offsetAtMidnight(zone, day - 1) === offset &&
    offsetAtMidnight(zone, day + 1) === offset &&
    offsetAtMidnight(zone, day + 2) === offset
    ? offset
    : undefined;
}

/** The local date (day number) of an instant in `zone`. */
const localDay = (zone: IANAZone, ms: number) => Math.floor((ms + zone.offset(ms) * MINUTE_MS) / DAY_MS);

/** ISO weekday (1 = Monday) of a day number; 1970-01-01 was a Thursday. */
const isoWeekday = (day: number) => ((((day + 3) % 7) + 7) % 7) + 1;

function calendarDate(day: number): CalendarDate {
  const d = new Date(day * DAY_MS);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

const minutesOf = (t: ClockTime) => (t.endOfDay ? 24 * 60 : t.hour * 60 + t.minute);

/**
 * The start instants (ms since the epoch, ascending) of the bookable slots of one host within
 * `range` (read as `rangeContains` does: start >= range.start, end <= range.end), each
 * `durationMinutes` long. In each working block (see `workingBlocks`) candidates start at
 * the block start and every `stepMinutes` of elapsed time after it; a candidate is kept when
 * all of it fits in the block and it overlaps no busy range (a busy range ending exactly at
 * the slot's start, or starting at its end, does not overlap). Steps are in elapsed time, so
 * a fall-back day yields no duplicate instants; overlapping blocks cannot yield duplicates
 * either.
 *
 * This is the hot path of availability: a block's bounds are found with integer arithmetic
 * from the day's offset (one memoised Intl look-up per zone and day), and only on a day
 * that a DST transition may touch with the exact wall-clock resolution of `workingBlocks`;
 * slots are plain numbers. Throws RangeError for a non-IANA zone, malformed working hours or
 * non-positive minutes: those are validated where they are stored or requested.
 */
export function slotStarts(input: {
  host: HostCalendar;
  range: TimeRange;
  durationMinutes: number;
  stepMinutes: number;
}): number[] {
  const { host, range, durationMinutes, stepMinutes } = input;
  assertPositiveMinutes("durationMinutes", durationMinutes);
  assertPositiveMinutes("stepMinutes", stepMinutes);
  assertZone(host.timeZone);
  const rangeStart = range.start.getTime();
  const rangeEnd = range.end.getTime();
  if (rangeEnd <= rangeStart) return [];
  const zone = IANAZone.create(host.timeZone) as IANAZone;
  const byWeekday = parseWorkingHours(host.workingHours);
  const blocksOf: ParsedBlock[][] = [];
  for (let weekday = 1; weekday <= 7; weekday++) {
    blocksOf[weekday] = (byWeekday.get(weekday) ?? []).sort((a, b) => minutesOf(a.start) - minutesOf(b.start));
  }
  const busy = mergeBusy(host.busy);
  const durationMs = durationMinutes * MINUTE_MS;
  const stepMs = stepMinutes * MINUTE_MS;
  const starts: number[] = [];
  let previous = Number.NEGATIVE_INFINITY;
  let ordered = true;
  const lastDay = localDay(zone, rangeEnd);
  for (let day = localDay(zone, rangeStart); day <= lastDay; day++) {
    const blocks = blocksOf[isoWeekday(day)]!;
    if (blocks.length === 0) continue;
    const offset = steadyOffset(zone, day);
    for (const block of blocks) {
      let blockStart: number;
      let blockEnd: number;
      if (offset !== undefined) {
        blockStart = day * DAY_MS + (minutesOf(block.start) - offset) * MINUTE_MS;
        blockEnd = day * DAY_MS + (minutesOf(block.end) - offset) * MINUTE_MS;
      } else {
        const date = calendarDate(day);
        blockStart = wallClockInstant(zone.name, date, block.start);
        blockEnd = wallClockInstant(zone.name, date, block.end);
      }
      // A block lying wholly inside a spring-forward gap collapses to nothing.
      if (blockEnd <= blockStart || blockEnd <= rangeStart || blockStart >= rangeEnd) continue;
      for (let start = blockStart; start + durationMs <= blockEnd; start += stepMs) {
        if (start < rangeStart) continue;
        if (start + durationMs > rangeEnd) break;
        if (overlapsBusy(busy, start, start + durationMs)) continue;
        if (start <= previous) ordered = false;
        starts.push(start);
        previous = start;
      }
    }
  }
  // Blocks that overlap, or a transition day's blocks, can break the order or repeat a start.
  return ordered ? starts : [...new Set(starts)].sort((a, b) => a - b);
}

/** `slotStarts` as UTC ranges. */
export function hostSlots(input: {
  host: HostCalendar;
  range: TimeRange;
  durationMinutes: number;
  stepMinutes: number;
}): TimeRange[] {
  const durationMs = input.durationMinutes * MINUTE_MS;
  return slotStarts(input).map((start) => ({ start: new Date(start), end: new Date(start + durationMs) }));
}

/**
 * Whether `slot` is still one `hostSlots` would offer: the right length, on the step grid of
 * a working block, and free. Used to re-check a slot token's slot at booking time; the
 * caller checks the booking window separately (`isWithinWindow`) and, when rescheduling,
 * leaves the meeting being moved out of `host.busy`.
 */
export function isSlotAvailable(
  host: HostCalendar,
  slot: TimeRange,
  durationMinutes: number,
  stepMinutes: number,
): boolean {
  if (slot.end.getTime() - slot.start.getTime() !== durationMinutes * MINUTE_MS) return false;
  // With the range equal to the slot, hostSlots can return at most this one slot.
  return hostSlots({ host, range: slot, durationMinutes, stepMinutes }).some(
    (s) => s.start.getTime() === slot.start.getTime(),
  );
}
