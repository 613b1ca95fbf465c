import type { FormField, HostCalendar, SlotTokenPayload, TimeRange, WorkingHours } from "../../src/domain/model.js";

const ALL_DAYS = [1, 2, 3, 4, 5, 6, 7] as const;

/** The same block on every weekday. */
export function everyDay(start: string, end: string): WorkingHours[] {
  return ALL_DAYS.map((weekday) => ({ weekday, start, end }));
}

export function aHost(overrides: Partial<HostCalendar> = {}): HostCalendar {
  return {
    userId: "usr_ada",
    displayName: "Ada Lovelace",
    timeZone: "UTC",
    workingHours: everyDay("09:00", "17:00"),
    busy: [],
    ...overrides,
  };
}

export function range(start: string, end: string): TimeRange {
  return { start: new Date(start), end: new Date(end) };
}

export function aField(overrides: Partial<FormField> & Pick<FormField, "key" | "type">): FormField {
  return { label: overrides.key, options: [], required: false, ...overrides };
}

export function aSlotTokenPayload(overrides: Partial<SlotTokenPayload> = {}): SlotTokenPayload {
  return {
    orgId: "org_acme",
    scheduleId: "sched_intro",
    hostUserId: "usr_ada",
    start: "2026-03-10T14:00:00.000Z",
    end: "2026-03-10T14:30:00.000Z",
    expiresAt: "2026-03-10T12:10:00.000Z",
    preview: false,
    formValuesHash: "0".repeat(64),
    ...overrides,
  };
}

/** Slot starts as ISO strings: exact UTC instants are easier to compare and to read in a failure. */
export function starts(slots: TimeRange[]): string[] {
  return slots.map((s) => s.start.toISOString());
}

export function problemName(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return (err as { problemName?: string }).problemName ?? `not a problem: ${String(err)}`;
  }
  throw new Error("expected a problem");
}
