import { describe, expect, it } from "vitest";
import { slotStarts, workingBlocks } from "../../src/domain/availability.js";
import type { HostCalendar, TimeRange, WorkingHours } from "../../src/domain/model.js";

// slotStarts replaced a generator that resolved every working block with Luxon. That
// generator is kept here, as it was, as the reference: on random hosts, zones, working hours,
// busy blocks, ranges, durations and steps (seeded, so a failure reproduces) both must give
// exactly the same slots. The zones are chosen for their odd transitions: 30-minute DST (Lord
// Howe), negative DST (Dublin), Ramadan suspensions (Casablanca), 2-hour DST (Troll), +13:45
// (Chatham), the date line (Apia, Kiritimati), the southern hemisphere and none at all.

const MINUTE_MS = 60_000;

function referenceStarts(input: {
  host: HostCalendar;
  range: TimeRange;
  durationMinutes: number;
  stepMinutes: number;
}): number[] {
  const { host, range, durationMinutes, stepMinutes } = input;
  const durationMs = durationMinutes * MINUTE_MS;
  const stepMs = stepMinutes * MINUTE_MS;
  const busy = host.busy.map((b): [number, number] => [b.start.getTime(), b.end.getTime()]).filter(([s, e]) => e > s);
  const starts = new Set<number>();
  for (const block of workingBlocks(host, range)) {
    const blockEnd = block.end.getTime();
    for (let start = block.start.getTime(); start + durationMs <= blockEnd; start += stepMs) {
      const end = start + durationMs;
      if (start < range.start.getTime() || end > range.end.getTime()) continue;
      if (busy.some(([s, e]) => s < end && e > start)) continue;
      starts.add(start);
    }
  }
  return [...starts].sort((a, b) => a - b);
}

/** mulberry32: a small seeded generator, so every case can be replayed from its seed. */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ZONES = [
  "UTC",
  "America/New_York",
  "America/Los_Angeles",
  "America/St_Johns",
  "America/Santiago",
  "America/Sao_Paulo",
  "Europe/Berlin",
  "Europe/Dublin",
  "Europe/London",
  "Africa/Casablanca",
  "Asia/Kolkata",
  "Asia/Tehran",
  "Asia/Kathmandu",
  "Australia/Sydney",
  "Australia/Lord_Howe",
  "Pacific/Chatham",
  "Pacific/Apia",
  "Pacific/Kiritimati",
  "Pacific/Pago_Pago",
  "Antarctica/Troll",
];

function clock(minutes: number): string {
  return `${String(Math.floor(minutes / 60)).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")}`;
}

function randomCase(seed: number) {
  const next = random(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  const workingHours: WorkingHours[] = [];
  for (let weekday = 1; weekday <= 7; weekday++) {
    const blocks = Math.floor(next() * 3); // 0–2 blocks, which may overlap
    for (let b = 0; b < blocks; b++) {
      // Often around 00:00–04:00, where transitions happen, and sometimes until 24:00.
      const start = next() < 0.4 ? Math.floor(next() * 16) * 15 : Math.floor(next() * 92) * 15;
      const end = next() < 0.15 ? 24 * 60 : Math.min(24 * 60 - 1, start + 15 + Math.floor(next() * 40) * 15);
      workingHours.push({
        weekday: weekday as WorkingHours["weekday"],
        start: clock(start),
        end: end === 24 * 60 ? "24:00" : clock(end),
      });
    }
  }
  // Ranges across the transitions of 2026–2030, up to 60 days long, on odd minutes too.
  const from = Date.UTC(2026, 0, 1) + Math.floor(next() * 5 * 365 * 24 * 60) * MINUTE_MS;
  const to = from + Math.floor(next() * 60 * 24 * 60) * MINUTE_MS;
  const busy: TimeRange[] = Array.from({ length: Math.floor(next() * 6) }, () => {
    const start = from + Math.floor(next() * ((to - from) / MINUTE_MS + 1)) * MINUTE_MS;
    return { start: new Date(start), end: new Date(start + Math.floor(next() * 600 - 60) * MINUTE_MS) };
  });
  const host: HostCalendar = { userId: "usr_ada", displayName: "Ada", timeZone: pick(ZONES), workingHours, busy };
  return {
    host,
    range: { start: new Date(from), end: new Date(to) },
    durationMinutes: pick([15, 20, 30, 45, 60, 90]),
    stepMinutes: pick([5, 10, 15, 30, 60]),
  };
}

describe("slotStarts is the reference generator, faster", () => {
  it("on 250 random hosts, zones and ranges", () => {
    for (let seed = 1; seed <= 250; seed++) {
      const input = randomCase(seed);
      expect(slotStarts(input), `seed ${seed} (${input.host.timeZone})`).toEqual(referenceStarts(input));
    }
  });

  it("on every day of two years around the transitions of each zone", () => {
    const workingHours: WorkingHours[] = [1, 2, 3, 4, 5, 6, 7].flatMap((weekday) => [
      { weekday: weekday as WorkingHours["weekday"], start: "00:00", end: "04:00" },
      { weekday: weekday as WorkingHours["weekday"], start: "01:30", end: "03:30" },
      { weekday: weekday as WorkingHours["weekday"], start: "22:00", end: "24:00" },
    ]);
    const range = { start: new Date("2026-01-01T00:00:00Z"), end: new Date("2028-01-01T00:00:00Z") };
    for (const timeZone of ZONES) {
      const input = { host: { userId: "usr_ada", displayName: "Ada", timeZone, workingHours, busy: [] }, range };
      const opts = { ...input, durationMinutes: 30, stepMinutes: 15 };
      expect(slotStarts(opts), timeZone).toEqual(referenceStarts(opts));
    }
  });
});
