import { describe, expect, it } from "vitest";
import { isWithinWindow, rangeContains, searchRange, windowRange } from "../../src/domain/booking-window.js";
import { range } from "./builders.js";

const now = new Date("2026-03-10T12:00:00.000Z");
const window = { minAdvanceMinutes: 120, maxAdvanceDays: 14 };

describe("searchRange", () => {
  it("is the booking window when no range is requested", () => {
    expect(searchRange(window, now)).toEqual(range("2026-03-10T14:00:00.000Z", "2026-03-24T12:00:00.000Z"));
    expect(windowRange(window, now)).toEqual(searchRange(window, now));
  });

  it("counts maxAdvanceDays as elapsed 24-hour days, across a DST change too", () => {
    const beforeUsDst = new Date("2026-03-01T12:00:00.000Z");
    expect(searchRange({ minAdvanceMinutes: 0, maxAdvanceDays: 30 }, beforeUsDst)?.end.toISOString()).toBe(
      "2026-03-31T12:00:00.000Z",
    );
  });

  it("intersects with the requested range", () => {
    expect(searchRange(window, now, range("2026-03-01T00:00:00Z", "2026-03-12T00:00:00Z"))).toEqual(
      range("2026-03-10T14:00:00Z", "2026-03-12T00:00:00Z"),
    );
    expect(searchRange(window, now, range("2026-03-11T00:00:00Z", "2026-04-30T00:00:00Z"))).toEqual(
      range("2026-03-11T00:00:00Z", "2026-03-24T12:00:00Z"),
    );
    expect(searchRange(window, now, range("2026-03-11T00:00:00Z", "2026-03-12T00:00:00Z"))).toEqual(
      range("2026-03-11T00:00:00Z", "2026-03-12T00:00:00Z"),
    );
  });

  it("is undefined when nothing is left", () => {
    // Entirely before the earliest start, ending exactly at it, after the latest end, inverted.
    expect(searchRange(window, now, range("2026-03-09T00:00:00Z", "2026-03-10T13:00:00Z"))).toBeUndefined();
    expect(searchRange(window, now, range("2026-03-10T13:00:00Z", "2026-03-10T14:00:00Z"))).toBeUndefined();
    expect(searchRange(window, now, range("2026-03-24T12:00:00Z", "2026-03-25T00:00:00Z"))).toBeUndefined();
    expect(searchRange(window, now, range("2026-03-12T00:00:00Z", "2026-03-11T00:00:00Z"))).toBeUndefined();
    expect(searchRange({ minAdvanceMinutes: 24 * 60, maxAdvanceDays: 1 }, now)).toBeUndefined();
    expect(searchRange(window, now, { start: new Date(Number.NaN), end: new Date(Number.NaN) })).toBeUndefined();
  });

  it("treats the requested end as inclusive: a slot ending exactly there is in range", () => {
    const r = searchRange(window, now, range("2026-03-11T09:00:00Z", "2026-03-11T17:00:00Z"))!;
    expect(rangeContains(r, range("2026-03-11T16:30:00Z", "2026-03-11T17:00:00Z"))).toBe(true);
    expect(rangeContains(r, range("2026-03-11T16:45:00Z", "2026-03-11T17:15:00Z"))).toBe(false);
    expect(rangeContains(r, range("2026-03-11T09:00:00Z", "2026-03-11T09:30:00Z"))).toBe(true);
    expect(rangeContains(r, range("2026-03-11T08:59:59.999Z", "2026-03-11T09:29:59.999Z"))).toBe(false);
  });
});

describe("isWithinWindow", () => {
  it("allows a slot starting exactly at the earliest start and one ending exactly at the latest end", () => {
    expect(isWithinWindow(window, now, range("2026-03-10T14:00:00Z", "2026-03-10T14:30:00Z"))).toBe(true);
    expect(isWithinWindow(window, now, range("2026-03-24T11:30:00Z", "2026-03-24T12:00:00Z"))).toBe(true);
  });

  it("rejects a slot a millisecond outside either edge", () => {
    expect(isWithinWindow(window, now, range("2026-03-10T13:59:59.999Z", "2026-03-10T14:29:59.999Z"))).toBe(false);
    expect(isWithinWindow(window, now, range("2026-03-24T11:30:00.001Z", "2026-03-24T12:00:00.001Z"))).toBe(false);
  });

  it("rejects a slot that was in the window when offered but is too soon at booking", () => {
    const slot = range("2026-03-10T14:00:00Z", "2026-03-10T14:30:00Z");
    expect(isWithinWindow(window, new Date(now.getTime() + 60_000), slot)).toBe(false);
  });
});
