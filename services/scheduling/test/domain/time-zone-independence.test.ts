import { Settings } from "luxon";
import { afterEach, describe, expect, it } from "vitest";
import { hostSlots } from "../../src/domain/availability.js";
import { searchRange } from "../../src/domain/booking-window.js";
import type { HostCalendar, TimeRange } from "../../src/domain/model.js";
import { aHost, range, starts } from "./builders.js";

// Slot computation must depend only on the host's zone, never on the zone of the process
// nor on the date it runs. These tests change both inside the process; the suite is also run
// under other zones from the outside, e.g.
//   TZ=America/Los_Angeles npx vitest run --project unit services/scheduling/test/domain
//   TZ=Asia/Kolkata npx vitest run --project unit services/scheduling/test/domain

const originalTz = process.env.TZ;
const originalNow = Settings.now;

afterEach(() => {
  if (originalTz === undefined) delete process.env.TZ;
  else process.env.TZ = originalTz;
  Settings.now = originalNow;
});

const cases: Array<{ host: HostCalendar; range: TimeRange }> = [
  {
    host: aHost({ timeZone: "America/New_York", workingHours: [{ weekday: 7, start: "00:00", end: "04:00" }] }),
    range: range("2026-10-31T00:00:00Z", "2026-11-03T00:00:00Z"),
  },
  {
    host: aHost({ timeZone: "America/New_York", workingHours: [{ weekday: 7, start: "01:30", end: "02:30" }] }),
    range: range("2026-10-31T00:00:00Z", "2026-11-03T00:00:00Z"),
  },
  { host: aHost({ timeZone: "Europe/Berlin" }), range: range("2026-03-27T00:00:00Z", "2026-03-31T00:00:00Z") },
  {
    host: aHost({ timeZone: "Europe/Berlin", workingHours: [{ weekday: 7, start: "02:00", end: "04:00" }] }),
    range: range("2026-10-24T00:00:00Z", "2026-10-26T00:00:00Z"),
  },
  { host: aHost({ timeZone: "Asia/Kolkata" }), range: range("2026-03-08T00:00:00Z", "2026-03-11T00:00:00Z") },
  {
    host: aHost({ timeZone: "Australia/Sydney", workingHours: [{ weekday: 7, start: "02:30", end: "03:00" }] }),
    range: range("2026-04-03T00:00:00Z", "2026-04-06T00:00:00Z"),
  },
  { host: aHost({ timeZone: "Australia/Sydney" }), range: range("2026-10-02T00:00:00Z", "2026-10-06T00:00:00Z") },
];

const compute = () => cases.map((c) => starts(hostSlots({ ...c, durationMinutes: 30, stepMinutes: 30 })));

describe("independence from the process zone and the current date", () => {
  it("gives the same instants whatever process.env.TZ is", () => {
    const baseline = compute();
    expect(baseline.every((s) => s.length > 0)).toBe(true);
    const offsets = new Set<number>();
    for (const tz of ["UTC", "America/Los_Angeles", "Asia/Kolkata", "Pacific/Chatham", "Australia/Sydney"]) {
      process.env.TZ = tz;
      offsets.add(new Date("2026-01-15T00:00:00Z").getTimezoneOffset());
      expect(compute(), tz).toEqual(baseline);
    }
    // Guards the test itself: switching TZ inside the process must really have switched zones.
    expect(offsets.size).toBeGreaterThan(1);
  });

  it("resolves repeated local times the same way in January and in July", () => {
    // Luxon resolves an ambiguous wall time with the zone's offset at `Settings.now()`;
    // the domain must not inherit that.
    Settings.now = () => Date.parse("2026-01-15T12:00:00Z");
    const january = compute();
    Settings.now = () => Date.parse("2026-07-15T12:00:00Z");
    expect(compute()).toEqual(january);
  });

  it("computes the booking window from instants only", () => {
    const now = new Date("2026-03-08T06:30:00Z");
    const expected = searchRange({ minAdvanceMinutes: 90, maxAdvanceDays: 1 }, now);
    process.env.TZ = "America/New_York";
    expect(searchRange({ minAdvanceMinutes: 90, maxAdvanceDays: 1 }, now)).toEqual(expected);
    expect(expected).toEqual(range("2026-03-08T08:00:00Z", "2026-03-09T06:30:00Z"));
  });
});
