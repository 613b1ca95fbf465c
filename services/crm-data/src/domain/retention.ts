/** The spec's transcript retention: 12 months from the meeting's end. */
export const TRANSCRIPT_RETENTION_MONTHS = 12;

/** `at` moved by whole calendar months in UTC (Jan 31 + 1 month is the last day of February). */
export function addMonths(at: Date, months: number): Date {
  const target = new Date(at.getTime());
  const day = target.getUTCDate();
  target.setUTCDate(1);
  target.setUTCMonth(target.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(day, lastDay));
  return target;
}

/** When a meeting's transcript stops being served. */
export function transcriptExpiresAt(meetingEnd: Date): Date {
  return addMonths(meetingEnd, TRANSCRIPT_RETENTION_MONTHS);
}

/** True from the instant the retention ends, by the injected clock's `now`. */
export function transcriptExpired(meetingEnd: Date, now: Date): boolean {
  return now.getTime() >= transcriptExpiresAt(meetingEnd).getTime();
}
