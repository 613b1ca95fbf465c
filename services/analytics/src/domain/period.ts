import { problem } from "@platform/kit/problems";

/** The periods the spec allows, in days; 7 when the request names none. */
export const PERIOD_DAYS = [7, 14, 30] as const;
export type PeriodDays = (typeof PERIOD_DAYS)[number];
const DEFAULT_PERIOD: PeriodDays = 7;

const DAY_MS = 86_400_000;

/** `periodDays` of a request (0 = unset); anything but 7, 14 or 30 is 400 invalid-field. */
export function periodDays(raw: number): PeriodDays {
  if (raw === 0) return DEFAULT_PERIOD;
  const found = PERIOD_DAYS.find((p) => p === raw);
  if (found === undefined) {
    throw problem("invalid-field", `periodDays must be one of ${PERIOD_DAYS.join(", ")}, not ${raw}.`, {
      field: "periodDays",
    });
  }
  return found;
}

/**
 * The first instant of a period of `days` UTC calendar days ending today (today included):
 * at 2026-03-10T15:00Z a 7-day period starts at 2026-03-04T00:00Z. Calendar days, not a
 * rolling 24 h window, so the activity days and the summary cover the same span.
 */
export function periodStart(now: Date, days: number): Date {
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  return new Date(today - (days - 1) * DAY_MS);
}

/** The UTC calendar day of an instant, YYYY-MM-DD. */
export function dayOf(at: Date): string {
  return at.toISOString().slice(0, 10);
}
