import { type MeetingStatus, meetingStatus as statusOf } from "@platform/contracts/rest/meeting";

export type { MeetingStatus } from "@platform/contracts/rest/meeting";

/** The shared status rule (libs/contracts) on scheduling's record, where a cancellation is its time. */
export function meetingStatus(m: { end: Date; canceledAt: Date | null }, now: Date): MeetingStatus {
  return statusOf({ end: m.end, canceled: m.canceledAt !== null }, now);
}
