import { describe, expect, it } from "vitest";
import { hostSlots, isSlotAvailable, validateWorkingHours, workingBlocks } from "../../src/domain/availability.js";
import type { HostCalendar, WorkingHours } from "../../src/domain/model.js";
import { aHost, everyDay, range, starts } from "./builders.js";

// Every expectation below is an exact UTC instant worked out by hand from the zone's rules
// for 2026, so a wrong offset anywhere shows up as a wrong string.

function slots(host: HostCalendar, from: string, to: string, durationMinutes = 60, stepMinutes = 60): string[] {
  return starts(hostSlots({ host, range: range(from, to), durationMinutes, stepMinutes }));
}

/** `count` instants from `first`, `stepMinutes` apart, as ISO strings. */
function series(first: string, count: number, stepMinutes = 60): string[] {
  const t = new Date(first).getTime();
  return Array.from({ length: count }, (_, i) => new Date(t + i * stepMinutes * 60_000).toISOString());
}

const sunday = (start: string, end: string): WorkingHours[] => [{ weekday: 7, start, end }];

describe("hostSlots: America/New_York (US DST: Mar 8 and Nov 1, 2026)", () => {
  const host = aHost({ timeZone: "America/New_York" });

  it("keeps 09:00-17:00 at 8 local hours on both sides of spring forward", () => {
    expect(slots(host, "2026-03-07T00:00:00Z", "2026-03-08T00:00:00Z")).toEqual(series("2026-03-07T14:00:00.000Z", 8));
    expect(slots(host, "2026-03-08T00:00:00Z", "2026-03-09T00:00:00Z")).toEqual(series("2026-03-08T13:00:00.000Z", 8));
    expect(slots(host, "2026-03-09T00:00:00Z", "2026-03-10T00:00:00Z")).toEqual(series("2026-03-09T13:00:00.000Z", 8));
  });

  it("keeps 09:00-17:00 at 8 local hours on both sides of fall back", () => {
    expect(slots(host, "2026-10-31T00:00:00Z", "2026-11-01T00:00:00Z")).toEqual(series("2026-10-31T13:00:00.000Z", 8));
    expect(slots(host, "2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z")).toEqual(series("2026-11-01T14:00:00.000Z", 8));
  });

  it("gives a block spanning spring forward its real length (00:00-04:00 is 3 hours)", () => {
    const h = aHost({ timeZone: "America/New_York", workingHours: sunday("00:00", "04:00") });
    // 00:00 EST, 01:00 EST, then 03:00 EDT: there is no 02:00.
    expect(slots(h, "2026-03-08T00:00:00Z", "2026-03-09T00:00:00Z")).toEqual([
      "2026-03-08T05:00:00.000Z",
      "2026-03-08T06:00:00.000Z",
      "2026-03-08T07:00:00.000Z",
    ]);
  });

  it("drops a block inside the gap and shifts a start in the gap forward by the gap", () => {
    const inGap = aHost({ timeZone: "America/New_York", workingHours: sunday("02:00", "03:00") });
    expect(slots(inGap, "2026-03-08T00:00:00Z", "2026-03-09T00:00:00Z")).toEqual([]);
    // 02:30 does not exist; Luxon moves it to 03:30 EDT (07:30Z), leaving 30 minutes to 04:00 EDT.
    const startInGap = aHost({ timeZone: "America/New_York", workingHours: sunday("02:30", "04:00") });
    expect(slots(startInGap, "2026-03-08T00:00:00Z", "2026-03-09T00:00:00Z", 30, 30)).toEqual([
      "2026-03-08T07:30:00.000Z",
    ]);
  });

  it("gives a block spanning fall back its real length without duplicate instants (00:00-04:00 is 5 hours)", () => {
    const h = aHost({ timeZone: "America/New_York", workingHours: sunday("00:00", "04:00") });
    // 00:00 EDT, 01:00 EDT, 01:00 EST, 02:00 EST, 03:00 EST.
    const result = slots(h, "2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z");
    expect(result).toEqual(series("2026-11-01T04:00:00.000Z", 5));
    expect(new Set(result).size).toBe(result.length);
  });

  it("starts a block at a repeated local time at its first occurrence", () => {
    // 01:30 EDT (05:30Z) to 02:30 EST (07:30Z): everything the wall clock shows in between.
    const h = aHost({ timeZone: "America/New_York", workingHours: sunday("01:30", "02:30") });
    expect(slots(h, "2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z", 30, 30)).toEqual(
      series("2026-11-01T05:30:00.000Z", 4, 30),
    );
  });

  it("walks a multi-day range across the transition", () => {
    const result = slots(host, "2026-03-07T00:00:00Z", "2026-03-10T00:00:00Z");
    expect(result).toEqual([
      ...series("2026-03-07T14:00:00.000Z", 8),
      ...series("2026-03-08T13:00:00.000Z", 8),
      ...series("2026-03-09T13:00:00.000Z", 8),
    ]);
  });
});

describe("hostSlots: Europe/Berlin (EU DST: Mar 29 and Oct 25, 2026)", () => {
  const host = aHost({ timeZone: "Europe/Berlin" });

  it("keeps 09:00-17:00 local across spring forward", () => {
    expect(slots(host, "2026-03-28T00:00:00Z", "2026-03-29T00:00:00Z")).toEqual(series("2026-03-28T08:00:00.000Z", 8));
    expect(slots(host, "2026-03-29T00:00:00Z", "2026-03-30T00:00:00Z")).toEqual(series("2026-03-29T07:00:00.000Z", 8));
  });

  it("keeps 09:00-17:00 local across fall back", () => {
    expect(slots(host, "2026-10-24T00:00:00Z", "2026-10-25T00:00:00Z")).toEqual(series("2026-10-24T07:00:00.000Z", 8));
    expect(slots(host, "2026-10-25T00:00:00Z", "2026-10-26T00:00:00Z")).toEqual(series("2026-10-25T08:00:00.000Z", 8));
  });

  it("shortens 01:00-04:00 to 2 hours on spring forward and lengthens 02:00-04:00 to 3 on fall back", () => {
    const spring = aHost({ timeZone: "Europe/Berlin", workingHours: sunday("01:00", "04:00") });
    // 01:00 CET (00:00Z) to 04:00 CEST (02:00Z).
    expect(slots(spring, "2026-03-28T12:00:00Z", "2026-03-29T12:00:00Z")).toEqual([
      "2026-03-29T00:00:00.000Z",
      "2026-03-29T01:00:00.000Z",
    ]);
    const autumn = aHost({ timeZone: "Europe/Berlin", workingHours: sunday("02:00", "04:00") });
    // 02:00 is repeated: its first occurrence is 02:00 CEST (00:00Z); 04:00 CET is 03:00Z.
    expect(slots(autumn, "2026-10-24T12:00:00Z", "2026-10-25T12:00:00Z")).toEqual(
      series("2026-10-25T00:00:00.000Z", 3),
    );
  });
});

describe("hostSlots: Asia/Kolkata (UTC+05:30, no DST)", () => {
  it("puts slots on the half hour in UTC", () => {
    const host = aHost({ timeZone: "Asia/Kolkata" });
    // 09:00 IST = 03:30Z, 17:00 IST = 11:30Z; 45-minute meetings every 30 minutes, last at 10:30Z.
    const result = slots(host, "2026-03-10T00:00:00Z", "2026-03-11T00:00:00Z", 45, 30);
    expect(result).toEqual(series("2026-03-10T03:30:00.000Z", 15, 30));
    expect(
      hostSlots({
        host,
        range: range("2026-03-10T00:00:00Z", "2026-03-11T00:00:00Z"),
        durationMinutes: 45,
        stepMinutes: 30,
      })
        .at(-1)
        ?.end.toISOString(),
    ).toBe("2026-03-10T11:15:00.000Z");
  });

  it("walks the host's local dates, not UTC dates, and takes the weekday there", () => {
    // Monday 00:00-02:00 IST on Mar 9 is Sunday 18:30Z-20:30Z on Mar 8.
    const host = aHost({ timeZone: "Asia/Kolkata", workingHours: [{ weekday: 1, start: "00:00", end: "02:00" }] });
    expect(slots(host, "2026-03-08T00:00:00Z", "2026-03-10T00:00:00Z")).toEqual([
      "2026-03-08T18:30:00.000Z",
      "2026-03-08T19:30:00.000Z",
    ]);
  });
});

describe("hostSlots: Australia/Sydney (Apr 5 fall back, Oct 4 spring forward, 2026)", () => {
  const host = aHost({ timeZone: "Australia/Sydney" });

  it("keeps 09:00-17:00 local across fall back", () => {
    // AEDT (+11) on Apr 4, AEST (+10) on Apr 5.
    expect(slots(host, "2026-04-03T12:00:00Z", "2026-04-04T12:00:00Z")).toEqual(series("2026-04-03T22:00:00.000Z", 8));
    expect(slots(host, "2026-04-04T12:00:00Z", "2026-04-05T12:00:00Z")).toEqual(series("2026-04-04T23:00:00.000Z", 8));
  });

  it("keeps 09:00-17:00 local across spring forward", () => {
    // AEST (+10) on Oct 3, AEDT (+11) on Oct 4.
    expect(slots(host, "2026-10-02T12:00:00Z", "2026-10-03T12:00:00Z")).toEqual(series("2026-10-02T23:00:00.000Z", 8));
    expect(slots(host, "2026-10-03T12:00:00Z", "2026-10-04T12:00:00Z")).toEqual(series("2026-10-03T22:00:00.000Z", 8));
  });

  it("gives 00:00-08:00 9 hours on Apr 5 and 7 hours on Oct 4", () => {
    const h = aHost({ timeZone: "Australia/Sydney", workingHours: sunday("00:00", "08:00") });
    expect(slots(h, "2026-04-04T00:00:00Z", "2026-04-05T00:00:00Z")).toEqual(series("2026-04-04T13:00:00.000Z", 9));
    expect(slots(h, "2026-10-03T00:00:00Z", "2026-10-04T00:00:00Z")).toEqual(series("2026-10-03T14:00:00.000Z", 7));
  });

  it("starts a block at a repeated time at its first occurrence (02:30 AEDT)", () => {
    const h = aHost({ timeZone: "Australia/Sydney", workingHours: sunday("02:30", "03:00") });
    // 02:30 AEDT (15:30Z) to 03:00 AEST (17:00Z), which happens only once.
    expect(slots(h, "2026-04-04T00:00:00Z", "2026-04-05T00:00:00Z", 30, 30)).toEqual(
      series("2026-04-04T15:30:00.000Z", 3, 30),
    );
  });

  it("drops a block inside the Oct 4 gap", () => {
    const h = aHost({ timeZone: "Australia/Sydney", workingHours: sunday("02:00", "03:00") });
    expect(slots(h, "2026-10-03T00:00:00Z", "2026-10-04T00:00:00Z")).toEqual([]);
  });
});

describe("hostSlots: busy time", () => {
  const host = (busy: Array<[string, string]>) =>
    aHost({ workingHours: everyDay("09:00", "12:00"), busy: busy.map(([s, e]) => range(s, e)) });
  const day = (h: HostCalendar) => slots(h, "2026-03-10T00:00:00Z", "2026-03-11T00:00:00Z", 30, 30);

  it("removes overlapping slots and keeps adjacent ones (half-open ranges)", () => {
    expect(day(host([["2026-03-10T10:00:00Z", "2026-03-10T10:30:00Z"]]))).toEqual([
      "2026-03-10T09:00:00.000Z",
      "2026-03-10T09:30:00.000Z",
      "2026-03-10T10:30:00.000Z",
      "2026-03-10T11:00:00.000Z",
      "2026-03-10T11:30:00.000Z",
    ]);
  });

  it("removes every slot a busy range partly covers", () => {
    expect(day(host([["2026-03-10T09:59:00Z", "2026-03-10T10:31:00Z"]]))).toEqual([
      "2026-03-10T09:00:00.000Z",
      "2026-03-10T11:00:00.000Z",
      "2026-03-10T11:30:00.000Z",
    ]);
  });

  it("handles unsorted, overlapping, nested and empty busy ranges", () => {
    const h = host([
      ["2026-03-10T11:00:00Z", "2026-03-10T11:10:00Z"],
      ["2026-03-10T09:00:00Z", "2026-03-10T09:45:00Z"],
      ["2026-03-10T09:10:00Z", "2026-03-10T09:20:00Z"],
      ["2026-03-10T09:40:00Z", "2026-03-10T09:50:00Z"],
      ["2026-03-10T10:15:00Z", "2026-03-10T10:15:00Z"],
      ["2026-03-10T10:45:00Z", "2026-03-10T10:40:00Z"],
    ]);
    expect(day(h)).toEqual(["2026-03-10T10:00:00.000Z", "2026-03-10T10:30:00.000Z", "2026-03-10T11:30:00.000Z"]);
  });

  it("ignores busy time outside working hours", () => {
    expect(day(host([["2026-03-10T00:00:00Z", "2026-03-10T09:00:00Z"]]))).toHaveLength(6);
  });
});

describe("hostSlots: steps, durations and blocks", () => {
  const host = (hours: WorkingHours[]) => aHost({ workingHours: hours });
  const tuesday = (start: string, end: string): WorkingHours[] => [{ weekday: 2, start, end }];
  const day = "2026-03-10T00:00:00Z";
  const next = "2026-03-11T00:00:00Z";

  it("steps shorter than the duration give overlapping candidates that must fit the block", () => {
    expect(slots(host(tuesday("09:00", "11:00")), day, next, 60, 30)).toEqual([
      "2026-03-10T09:00:00.000Z",
      "2026-03-10T09:30:00.000Z",
      "2026-03-10T10:00:00.000Z",
    ]);
  });

  it("steps longer than the duration leave gaps", () => {
    expect(slots(host(tuesday("09:00", "11:00")), day, next, 30, 45)).toEqual([
      "2026-03-10T09:00:00.000Z",
      "2026-03-10T09:45:00.000Z",
      "2026-03-10T10:30:00.000Z",
    ]);
  });

  it("aligns to the block start, not to the hour or to the range start", () => {
    const h = host(tuesday("09:10", "10:30"));
    expect(slots(h, day, next, 30, 30)).toEqual(["2026-03-10T09:10:00.000Z", "2026-03-10T09:40:00.000Z"]);
    expect(slots(h, "2026-03-10T09:20:00Z", next, 30, 30)).toEqual(["2026-03-10T09:40:00.000Z"]);
  });

  it("keeps only slots wholly inside the range, ending exactly at its end included", () => {
    expect(slots(host(tuesday("09:00", "12:00")), "2026-03-10T09:30:00Z", "2026-03-10T11:00:00Z")).toEqual([
      "2026-03-10T10:00:00.000Z",
    ]);
    expect(slots(host(tuesday("09:00", "12:00")), "2026-03-10T09:00:00Z", "2026-03-10T11:00:00Z")).toEqual([
      "2026-03-10T09:00:00.000Z",
      "2026-03-10T10:00:00.000Z",
    ]);
  });

  it("combines several blocks a day and never duplicates where blocks overlap", () => {
    const h = host([...tuesday("13:00", "15:00"), ...tuesday("09:00", "11:00"), ...tuesday("10:00", "12:00")]);
    expect(slots(h, day, next)).toEqual([
      "2026-03-10T09:00:00.000Z",
      "2026-03-10T10:00:00.000Z",
      "2026-03-10T11:00:00.000Z",
      "2026-03-10T13:00:00.000Z",
      "2026-03-10T14:00:00.000Z",
    ]);
  });

  it("accepts 24:00 as the end of the day", () => {
    expect(slots(host(tuesday("22:00", "24:00")), day, next)).toEqual([
      "2026-03-10T22:00:00.000Z",
      "2026-03-10T23:00:00.000Z",
    ]);
  });

  it("returns nothing for an empty range or a day off", () => {
    expect(slots(host(tuesday("09:00", "17:00")), next, day)).toEqual([]);
    expect(slots(host(tuesday("09:00", "17:00")), "2026-03-11T00:00:00Z", "2026-03-12T00:00:00Z")).toEqual([]);
  });

  it("returns each slot with end = start + duration", () => {
    const [first] = hostSlots({
      host: host(tuesday("09:00", "17:00")),
      range: range(day, next),
      durationMinutes: 25,
      stepMinutes: 30,
    });
    expect(first).toEqual(range("2026-03-10T09:00:00Z", "2026-03-10T09:25:00Z"));
  });

  it("refuses a bad zone, malformed working hours and non-positive minutes", () => {
    const r = range(day, next);
    expect(() =>
      hostSlots({ host: aHost({ timeZone: "Mars/Olympus" }), range: r, durationMinutes: 30, stepMinutes: 30 }),
    ).toThrow(RangeError);
    expect(() =>
      hostSlots({ host: host(tuesday("9:00", "17:00")), range: r, durationMinutes: 30, stepMinutes: 30 }),
    ).toThrow(RangeError);
    expect(() => hostSlots({ host: aHost(), range: r, durationMinutes: 0, stepMinutes: 30 })).toThrow(RangeError);
    expect(() => hostSlots({ host: aHost(), range: r, durationMinutes: 30, stepMinutes: 7.5 })).toThrow(RangeError);
  });
});

describe("validateWorkingHours and workingBlocks", () => {
  it("reports malformed times, end not after start and bad weekdays", () => {
    expect(validateWorkingHours(everyDay("09:00", "17:00"))).toEqual([]);
    expect(
      validateWorkingHours([
        { weekday: 1, start: "9:00", end: "17:00" },
        { weekday: 2, start: "17:00", end: "09:00" },
        { weekday: 3, start: "24:00", end: "24:00" },
        { weekday: 8 as 1, start: "09:00", end: "24:01" },
      ]),
    ).toEqual([
      { field: "workingHours[0].start", message: 'must be a time "HH:MM" from 00:00 to 23:59' },
      { field: "workingHours[1].end", message: "must be after start" },
      { field: "workingHours[2].start", message: 'must be a time "HH:MM" from 00:00 to 23:59' },
      { field: "workingHours[3].weekday", message: "must be an ISO weekday, 1 (Monday) to 7" },
      { field: "workingHours[3].end", message: 'must be a time "HH:MM" from 00:01 to 24:00' },
    ]);
  });

  it("lists the blocks touching a range in UTC", () => {
    const host = aHost({ timeZone: "America/New_York", workingHours: [{ weekday: 7, start: "09:00", end: "17:00" }] });
    expect(workingBlocks(host, range("2026-03-01T00:00:00Z", "2026-03-15T00:00:00Z"))).toEqual([
      range("2026-03-01T14:00:00Z", "2026-03-01T22:00:00Z"),
      range("2026-03-08T13:00:00Z", "2026-03-08T21:00:00Z"),
    ]);
  });
});

describe("isSlotAvailable", () => {
  const host = aHost({
    timeZone: "America/New_York",
    busy: [range("2026-03-09T15:00:00Z", "2026-03-09T15:30:00Z")],
  });
  const check = (start: string, end: string) => isSlotAvailable(host, range(start, end), 30, 30);

  it("accepts a slot hostSlots offers, on a DST day too", () => {
    expect(check("2026-03-09T13:00:00Z", "2026-03-09T13:30:00Z")).toBe(true);
    expect(check("2026-03-08T13:00:00Z", "2026-03-08T13:30:00Z")).toBe(true);
    expect(check("2026-03-09T20:30:00Z", "2026-03-09T21:00:00Z")).toBe(true);
  });

  it("rejects busy, off-grid, wrong-length and out-of-hours slots", () => {
    expect(check("2026-03-09T15:00:00Z", "2026-03-09T15:30:00Z")).toBe(false);
    expect(check("2026-03-09T13:15:00Z", "2026-03-09T13:45:00Z")).toBe(false);
    expect(check("2026-03-09T13:00:00Z", "2026-03-09T14:00:00Z")).toBe(false);
    // 09:00 EST would be 14:00Z on Mar 7, but 13:00Z is 08:00 EST: before working hours.
    expect(check("2026-03-07T13:00:00Z", "2026-03-07T13:30:00Z")).toBe(false);
    expect(check("2026-03-09T21:00:00Z", "2026-03-09T21:30:00Z")).toBe(false);
  });
});
