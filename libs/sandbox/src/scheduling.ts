import type { CampaignRecord, FormAnswer, ScheduleSettings, WorkingHours } from "@platform/contracts/rest/schedule";
import { DateTime } from "luxon";
import schedulingData from "./data/scheduling.json" with { type: "json" };
import { sandboxData } from "./data.js";

// The sandbox's scheduling data (scheduling seeds it; see services/scheduling/src/sandbox.ts).
// Organizations and hosts are named by identity's sandbox labels, so the ids match identity's
// users. Meeting and busy-block times are relative to the clock at seeding, in working days;
// the other contexts' sandboxes (recordings, transcripts) line up with them.

export interface SandboxHost {
  /** Identity's sandbox user label. */
  user: string;
  timeZone: string;
  workingHours: WorkingHours[];
}

/** Routing by host labels: the first matching rule's groups, else the fallback. */
export interface SandboxRouting {
  rules: { when: { fieldKey: string; anyOf: string[] }[]; hostGroups: string[][] }[];
  fallback: string[][];
}

/** A schedule's settings, with its org, hosts and routing by label and survey questions without keys. */
export interface SandboxSchedule extends ScheduleSettings {
  label: string;
  org: string;
  surveyQuestions: { label: string; type: "long-text" | "text"; required: boolean }[];
  routing: SandboxRouting;
  hosts: string[];
  /** Days after the epoch it was created and last changed; published at creation unless a draft or `unpublished`. */
  createdDay: number;
  updatedDay: number;
  unpublished?: boolean;
}

export interface SandboxMeeting {
  label: string;
  schedule: string;
  host: string;
  attendee: { firstName: string; lastName: string; email: string; phone?: string; timeZone?: string };
  additionalAttendees?: string[];
  /** Working days from the seeding day (negative: in the past), at `localTime` in the host's zone. */
  workingDays: number;
  localTime: string;
  durationMinutes: number;
  formValues: Record<string, FormAnswer>;
  surveyResponses?: Record<string, string>;
  campaign?: CampaignRecord;
  preview?: boolean;
  /** Canceled a day before seeding. */
  canceledReason?: string;
}

export interface SandboxBusyBlock {
  label: string;
  host: string;
  workingDays: number;
  localStart: string;
  localEnd: string;
}

export interface SchedulingSandboxDefinition {
  hosts: readonly SandboxHost[];
  schedules: readonly SandboxSchedule[];
  meetings: readonly SandboxMeeting[];
  busyBlocks: readonly SandboxBusyBlock[];
}

const weekdays = (start: string, end: string, days: WorkingHours["weekday"][] = [1, 2, 3, 4, 5]): WorkingHours[] =>
  days.map((weekday) => ({ weekday, start, end }));

export const SCHEDULING_SANDBOX: SchedulingSandboxDefinition = {
  hosts: [
    { user: "acme-owner", timeZone: "America/New_York", workingHours: weekdays("09:00", "17:00") },
    {
      user: "acme-admin",
      timeZone: "Europe/Berlin",
      workingHours: [...weekdays("08:30", "12:00"), ...weekdays("13:00", "17:30")],
    },
    { user: "acme-ae", timeZone: "America/Los_Angeles", workingHours: weekdays("10:00", "18:00", [1, 2, 3, 4]) },
    { user: "acme-sdr", timeZone: "Asia/Kolkata", workingHours: weekdays("10:00", "19:00") },
    { user: "acme-se", timeZone: "Australia/Sydney", workingHours: weekdays("08:00", "16:00") },
    { user: "umbrella-owner", timeZone: "Europe/Berlin", workingHours: weekdays("09:00", "16:00") },
    { user: "umbrella-rep", timeZone: "America/New_York", workingHours: weekdays("08:00", "15:00") },
  ],
  // Schedules, meetings and busy blocks: data/scheduling.json (see data.ts). Its facts the
  // docs rely on: acme-intro is routed by region; acme-demo sends no confirmations (the
  // account team confirms demos personally); acme-onboarding is disabled and unpublished,
  // acme-renewal a draft.
  schedules: sandboxData<readonly SandboxSchedule[]>(schedulingData.schedules),
  meetings: sandboxData<readonly SandboxMeeting[]>(schedulingData.meetings),
  busyBlocks: schedulingData.busyBlocks,
};

/** The local `time` of the working day `n` working days (Mon–Fri) from `now`'s date in `zone`. */
export function onWorkingDay(now: Date, zone: string, n: number, time: string): Date {
  let day = DateTime.fromJSDate(now, { zone }).startOf("day");
  const step = n < 0 ? -1 : 1;
  for (let left = Math.abs(n); left > 0; ) {
    day = day.plus({ days: step });
    if (day.weekday <= 5) left -= 1;
  }
  const [hour, minute] = time.split(":").map(Number);
  return day.set({ hour, minute }).toJSDate();
}

/** When a sandbox meeting takes place for a sandbox seeded at `now`. */
export function sandboxMeetingTimes(now: Date, label: string): { start: Date; end: Date } {
  const m = SCHEDULING_SANDBOX.meetings.find((x) => x.label === label);
  const host = SCHEDULING_SANDBOX.hosts.find((h) => h.user === m?.host);
  if (!m || !host) throw new Error(`no sandbox meeting ${label}`);
  const start = onWorkingDay(now, host.timeZone, m.workingDays, m.localTime);
  return { start, end: new Date(start.getTime() + m.durationMinutes * 60_000) };
}
