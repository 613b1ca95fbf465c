/** A meeting's status as the API reports it. */
export type MeetingStatus = "scheduled" | "completed" | "canceled";

/**
 * Derived, never stored: canceled wins over everything; otherwise completed once the end time
 * has been reached (end <= now), else scheduled. No sweeper runs, so this is computed on read.
 */
export function meetingStatus(m: { end: Date; canceledAt: Date | null }, now: Date): MeetingStatus {
  if (m.canceledAt !== null) return "canceled";
  return m.end.getTime() <= now.getTime() ? "completed" : "scheduled";
}
