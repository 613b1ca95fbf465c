import type {
  CampaignRecord,
  FormAnswer,
  LocationRecord,
  ScheduleSettings,
  WorkingHours,
} from "@platform/contracts/rest/schedule";
import { DateTime } from "luxon";

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

const video = (provider: "video_a" | "video_b" | "video_c"): LocationRecord => ({
  type: "video",
  provider,
  joinUrl: null,
  address: null,
});

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
  schedules: [
    {
      label: "acme-intro",
      org: "acme",
      name: "Intro call",
      description: "A first conversation with Acme's team, routed by region.",
      status: "active",
      durationMinutes: 30,
      bookingPeriods: [15, 30, 60],
      stepMinutes: 15,
      timeZone: "America/New_York",
      bookingWindow: { minAdvanceMinutes: 120, maxAdvanceDays: 30 },
      matchingForm: [
        { key: "region", label: "Region", type: "select", options: ["EMEA", "AMER", "APAC"], required: true },
        { key: "company_size", label: "Company size", type: "number", options: [], required: false },
      ],
      surveyQuestions: [
        { label: "What would you like to discuss?", type: "long-text", required: true },
        { label: "Anything we should prepare?", type: "long-text", required: false },
      ],
      routing: {
        rules: [
          { when: [{ fieldKey: "region", anyOf: ["EMEA"] }], hostGroups: [["acme-admin"], ["acme-owner"]] },
          { when: [{ fieldKey: "region", anyOf: ["AMER"] }], hostGroups: [["acme-ae", "acme-owner"], ["acme-admin"]] },
          { when: [{ fieldKey: "region", anyOf: ["APAC"] }], hostGroups: [["acme-sdr", "acme-se"], ["acme-owner"]] },
        ],
        fallback: [["acme-owner"]],
      },
      location: video("video_a"),
      sendConfirmations: true,
      hosts: ["acme-owner", "acme-admin", "acme-ae", "acme-sdr", "acme-se"],
      createdDay: 10,
      updatedDay: 90,
    },
    {
      label: "acme-demo",
      org: "acme",
      name: "Enterprise demo",
      description: "A tailored product demo for larger teams.",
      status: "active",
      durationMinutes: 60,
      bookingPeriods: [45, 60, 90],
      stepMinutes: 30,
      timeZone: "America/Los_Angeles",
      bookingWindow: { minAdvanceMinutes: 240, maxAdvanceDays: 21 },
      matchingForm: [
        {
          key: "products",
          label: "Products of interest",
          type: "multi-select",
          options: ["Analytics", "Scheduling", "Deal Intelligence"],
          required: true,
        },
        { key: "deployment", label: "Deployment", type: "select", options: ["Cloud", "On-premises"], required: false },
      ],
      surveyQuestions: [{ label: "Which tools do you use today?", type: "long-text", required: false }],
      routing: {
        rules: [
          { when: [{ fieldKey: "products", anyOf: ["Deal Intelligence"] }], hostGroups: [["acme-se"], ["acme-ae"]] },
        ],
        fallback: [["acme-ae", "acme-owner"]],
      },
      location: video("video_b"),
      // Demos are confirmed by the account team personally.
      sendConfirmations: false,
      hosts: ["acme-se", "acme-ae", "acme-owner"],
      createdDay: 20,
      updatedDay: 60,
    },
    {
      label: "acme-onboarding",
      org: "acme",
      name: "Partner onboarding",
      description: "Paused while the partner program is reworked.",
      status: "disabled",
      durationMinutes: 45,
      bookingPeriods: [45],
      stepMinutes: 15,
      timeZone: "America/New_York",
      bookingWindow: { minAdvanceMinutes: 1440, maxAdvanceDays: 14 },
      matchingForm: [],
      surveyQuestions: [],
      routing: { rules: [], fallback: [["acme-owner"]] },
      location: { type: "phone", provider: null, joinUrl: null, address: "+12025550199" },
      sendConfirmations: true,
      hosts: ["acme-owner"],
      createdDay: 30,
      updatedDay: 40,
      unpublished: true,
    },
    {
      label: "acme-renewal",
      org: "acme",
      name: "Renewal check-in",
      description: "Draft: not yet published.",
      status: "draft",
      durationMinutes: 30,
      bookingPeriods: [30],
      stepMinutes: 30,
      timeZone: "America/New_York",
      bookingWindow: { minAdvanceMinutes: 60, maxAdvanceDays: 30 },
      matchingForm: [],
      surveyQuestions: [],
      routing: { rules: [], fallback: [["acme-owner"]] },
      location: { type: "in-person", provider: null, joinUrl: null, address: "1 Acme Plaza, Springfield" },
      sendConfirmations: true,
      hosts: ["acme-owner"],
      createdDay: 95,
      updatedDay: 96,
    },
    {
      label: "umbrella-medical",
      org: "umbrella",
      name: "Medical information request",
      description: "Talk to a medical science liaison.",
      status: "active",
      durationMinutes: 30,
      bookingPeriods: [30],
      stepMinutes: 30,
      timeZone: "Europe/Berlin",
      bookingWindow: { minAdvanceMinutes: 60, maxAdvanceDays: 14 },
      matchingForm: [
        {
          key: "therapeutic_area",
          label: "Therapeutic area",
          type: "select",
          options: ["Oncology", "Cardiology", "Immunology"],
          required: true,
        },
      ],
      surveyQuestions: [{ label: "What is your question?", type: "long-text", required: true }],
      routing: { rules: [], fallback: [["umbrella-rep", "umbrella-owner"]] },
      location: video("video_c"),
      sendConfirmations: true,
      hosts: ["umbrella-rep", "umbrella-owner"],
      createdDay: 15,
      updatedDay: 45,
    },
  ],
  meetings: [
    {
      label: "acme-intro-completed",
      schedule: "acme-intro",
      host: "acme-admin",
      attendee: { firstName: "Ada", lastName: "Lovelace", email: "ada.lovelace@analytical.example" },
      workingDays: -2,
      localTime: "10:00",
      durationMinutes: 30,
      formValues: { region: "EMEA", company_size: 40 },
      surveyResponses: { "What would you like to discuss?": "Pricing for a 40-seat team." },
    },
    {
      label: "acme-intro-canceled",
      schedule: "acme-intro",
      host: "acme-ae",
      attendee: {
        firstName: "Grace",
        lastName: "Hopper",
        email: "grace.hopper@cobol.example",
        phone: "+14155550123",
        timeZone: "America/Los_Angeles",
      },
      workingDays: 3,
      localTime: "11:00",
      durationMinutes: 30,
      formValues: { region: "AMER" },
      surveyResponses: { "What would you like to discuss?": "Migrating from spreadsheets." },
      canceledReason: "The customer asked to meet next quarter.",
    },
    {
      label: "acme-intro-upcoming-amer",
      schedule: "acme-intro",
      host: "acme-owner",
      attendee: {
        firstName: "Alan",
        lastName: "Turing",
        email: "alan.turing@bletchley.example",
        phone: "+442079460123",
        timeZone: "Europe/London",
      },
      additionalAttendees: ["joan.clarke@bletchley.example"],
      workingDays: 1,
      localTime: "14:00",
      durationMinutes: 30,
      formValues: { region: "AMER", company_size: 120 },
      surveyResponses: {
        "What would you like to discuss?": "Routing inbound leads by region.",
        "Anything we should prepare?": "A short security overview.",
      },
      campaign: {
        id: "spring-26",
        source: "newsletter",
        medium: "email",
        campaign: "spring",
        term: null,
        content: null,
      },
    },
    {
      label: "acme-intro-upcoming-apac",
      schedule: "acme-intro",
      host: "acme-sdr",
      attendee: { firstName: "Srinivasa", lastName: "Ramanujan", email: "s.ramanujan@madras.example" },
      workingDays: 2,
      localTime: "11:30",
      durationMinutes: 60,
      formValues: { region: "APAC" },
      surveyResponses: { "What would you like to discuss?": "Rolling out to three offices." },
    },
    {
      label: "acme-demo-upcoming",
      schedule: "acme-demo",
      host: "acme-se",
      attendee: { firstName: "Katherine", lastName: "Johnson", email: "k.johnson@orbital.example" },
      workingDays: 4,
      localTime: "09:00",
      durationMinutes: 60,
      formValues: { products: ["Deal Intelligence", "Analytics"], deployment: "Cloud" },
      preview: true,
    },
    {
      label: "umbrella-medical-upcoming",
      schedule: "umbrella-medical",
      host: "umbrella-rep",
      attendee: { firstName: "Rosalind", lastName: "Franklin", email: "r.franklin@helix.example" },
      workingDays: 2,
      localTime: "13:00",
      durationMinutes: 30,
      formValues: { therapeutic_area: "Oncology" },
      surveyResponses: { "What is your question?": "Dosing in renal impairment." },
    },
  ],
  busyBlocks: [
    { label: "acme-owner-offsite", host: "acme-owner", workingDays: 1, localStart: "10:00", localEnd: "12:00" },
    { label: "acme-admin-training", host: "acme-admin", workingDays: 1, localStart: "13:00", localEnd: "15:00" },
    { label: "acme-se-travel", host: "acme-se", workingDays: 2, localStart: "08:00", localEnd: "10:00" },
  ],
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
