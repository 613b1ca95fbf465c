import { attendeeJson } from "@platform/contracts/rest/meeting";
import type { Clock } from "@platform/kit/clock";
import type { Db, Queryable } from "@platform/kit/db";
import { newId, seededId } from "@platform/kit/ids";
import {
  onWorkingDay,
  SANDBOX,
  type SandboxMeeting,
  type SandboxRouting,
  SCHEDULING_SANDBOX,
  sandboxBusyBlockId,
  sandboxMeetingId,
  sandboxMeetingTimes,
  sandboxOrgId,
  sandboxScheduleId,
  sandboxUser,
  sandboxUserEmail,
  sandboxUserId,
} from "@platform/sandbox";
import { simulatedConferencing, simulatedEventId, withConference } from "./application/providers.js";
import { DEFAULT_BOOKING_BASE_URL } from "./config.js";
import { validateWorkingHours } from "./domain/availability.js";
import { DEFAULT_WORKING_HOURS } from "./domain/host-defaults.js";
import { meetingTitle } from "./domain/meeting-title.js";
import type {
  FormAnswer,
  HostRecord,
  MeetingRecord,
  Routing,
  ScheduleRecord,
  ScheduleSettings,
  SurveyQuestion,
  WorkingHours,
} from "./domain/model.js";
import { isIanaZone } from "./domain/time-zone.js";
import { meetingBookedEvent, meetingCanceledEvent } from "./events/outbox-events.js";
import { meetingMessage } from "./messages.js";
import { type TxStore, txStore } from "./store/index.js";

/*
 * The sandbox: hosts, Smart Schedules, busy blocks and meetings for the sandbox
 * organizations, as @platform/sandbox defines them. Hosts ARE identity's sandbox users: their
 * ids, names and emails come from the shared sandbox definition (identity's tables are never
 * read). Ids derive from the seed; schedule timestamps are fixed from the sandbox's epoch;
 * meetings and busy blocks are placed relative to the clock so that one meeting is always
 * past and the others upcoming.
 */

const DAY_MS = 24 * 60 * 60 * 1000;
const HOUR_MS = 60 * 60 * 1000;

/**
 * A schedule to create; everything but the org, name and hosts has a default: an empty
 * description, active, 30 minutes (the only booking period), a 15-minute step, UTC, bookable
 * from now to 30 days ahead, no form or survey, no location, confirmations sent.
 */
export interface ScheduleDefinition extends Partial<ScheduleSettings> {
  id?: string;
  orgId: string;
  name: string;
  /** The assignees (hosts must exist in the same org). */
  hostUserIds: string[];
  /** `key` defaults to one derived from the question text, as the product derives it. */
  surveyQuestions?: (Omit<SurveyQuestion, "key"> & { key?: string })[];
  /** Default: every host in one group. */
  routing?: Routing;
  /** Default: createdAt, or null for a draft. */
  publishedAt?: Date | null;
  createdAt?: Date;
  updatedAt?: Date;
}

/** A host to create; the working hours default to Monday to Friday, 09:00 to 17:00. */
export interface HostDefinition {
  userId: string;
  orgId: string;
  email: string;
  firstName: string;
  lastName: string;
  displayName?: string;
  timeZone: string;
  workingHours?: WorkingHours[];
}

/** A survey question's key: its text lower-cased, runs of other characters as single dashes. */
const questionKey = (label: string): string =>
  label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");

/** Writes a schedule with its assignees; the builder of the sandbox, the tests and the benchmark. */
export async function createSchedule(q: Queryable, def: ScheduleDefinition): Promise<ScheduleRecord> {
  const durationMinutes = def.durationMinutes ?? 30;
  const status = def.status ?? "active";
  const createdAt = def.createdAt ?? new Date();
  const schedule: ScheduleRecord = {
    id: def.id ?? newId("sched_"),
    orgId: def.orgId,
    name: def.name,
    description: def.description ?? "",
    status,
    durationMinutes,
    bookingPeriods: def.bookingPeriods ?? [durationMinutes],
    stepMinutes: def.stepMinutes ?? 15,
    timeZone: def.timeZone ?? "UTC",
    bookingWindow: def.bookingWindow ?? { minAdvanceMinutes: 0, maxAdvanceDays: 30 },
    matchingForm: def.matchingForm ?? [],
    surveyQuestions: (def.surveyQuestions ?? []).map((s) => ({ ...s, key: s.key ?? questionKey(s.label) })),
    routing: def.routing ?? { rules: [], fallback: [def.hostUserIds] },
    location: def.location ?? null,
    sendConfirmations: def.sendConfirmations ?? true,
    publishedAt: def.publishedAt !== undefined ? def.publishedAt : status === "draft" ? null : createdAt,
    createdAt,
    updatedAt: def.updatedAt ?? createdAt,
  };
  await txStore(q).insertSchedule(schedule, def.hostUserIds);
  return schedule;
}

/** Writes a host; a zone or working hours the slot engine could not use fail here, not at availability. */
export async function createHost(q: Queryable, def: HostDefinition): Promise<HostRecord> {
  const workingHours = def.workingHours ?? [...DEFAULT_WORKING_HOURS];
  if (!isIanaZone(def.timeZone)) throw new Error(`host ${def.userId}: invalid time zone ${def.timeZone}`);
  const errors = validateWorkingHours(workingHours);
  if (errors.length > 0) {
    throw new Error(`host ${def.userId}: ${errors.map((e) => `${e.field} ${e.message}`).join("; ")}`);
  }
  const host: HostRecord = {
    userId: def.userId,
    orgId: def.orgId,
    email: def.email,
    firstName: def.firstName,
    lastName: def.lastName,
    displayName: def.displayName ?? `${def.firstName} ${def.lastName}`,
    timeZone: def.timeZone,
    workingHours,
  };
  await txStore(q).insertHost(host);
  return host;
}

function routingOf(seed: string, r: SandboxRouting): Routing {
  const ids = (groups: string[][]) => groups.map((g) => g.map((label) => sandboxUserId(seed, label)));
  return {
    rules: r.rules.map((rule) => ({ when: rule.when, hostGroups: ids(rule.hostGroups) })),
    fallback: ids(r.fallback),
  };
}

async function seedMeeting(
  w: TxStore,
  seed: string,
  m: SandboxMeeting,
  hosts: Map<string, HostRecord>,
  schedules: Map<string, ScheduleRecord>,
  now: Date,
  bookingBaseUrl: string,
): Promise<void> {
  const host = hosts.get(m.host);
  const schedule = schedules.get(m.schedule);
  if (!host || !schedule) throw new Error(`sandbox meeting ${m.label} names an unknown host or schedule`);
  const id = sandboxMeetingId(seed, m.label);
  const { start, end } = sandboxMeetingTimes(now, m.label);
  const createdAt = new Date(Math.min(now.getTime(), start.getTime()) - 3 * DAY_MS);
  const canceledAt = m.canceledReason ? new Date(now.getTime() - DAY_MS) : null;
  const formValues = schedule.matchingForm.flatMap((f) => {
    const answer: FormAnswer | undefined = m.formValues[f.key];
    return answer === undefined ? [] : [{ key: f.key, answer }];
  });
  const planned: MeetingRecord = {
    id,
    orgId: schedule.orgId,
    scheduleId: schedule.id,
    hostUserId: host.userId,
    attendee: attendeeJson(m.attendee),
    additionalAttendees: m.additionalAttendees ?? [],
    title: meetingTitle(schedule.name, m.attendee),
    start,
    end,
    timeZone: schedule.timeZone,
    location: schedule.location,
    conferencing: null,
    calendarEventId: simulatedEventId(id),
    formValues,
    surveyResponses: Object.entries(m.surveyResponses ?? {}).map(([question, answer]) => ({ question, answer })),
    campaign: m.campaign ?? null,
    preview: m.preview ?? false,
    canceledAt,
    cancelReason: m.canceledReason ?? null,
    createdAt,
    updatedAt: canceledAt ?? createdAt,
    version: canceledAt ? 2 : 1,
  };
  const meeting = await withConference(simulatedConferencing(), planned);
  await w.insertMeeting(meeting);
  const slot = { start: meeting.start, end: meeting.end, hostUserId: host.userId };
  await w.insertAudit({ meetingId: id, at: createdAt, action: "booked", reason: null, previous: null, next: slot });
  // Other contexts project meetings from the events (timelines, deal links), so the sandbox's
  // are published too, flagged so that nobody is notified of them.
  const message = meetingMessage({ meeting, host }, now, bookingBaseUrl);
  await w.enqueue(meetingBookedEvent(message, createdAt, true));
  if (canceledAt) {
    await w.enqueue(meetingCanceledEvent(message, meeting.cancelReason ?? "", false, canceledAt, true));
    await w.insertAudit({
      meetingId: id,
      at: canceledAt,
      action: "canceled",
      reason: meeting.cancelReason,
      previous: slot,
      next: null,
    });
  }
}

/**
 * Writes the sandbox in one transaction. Idempotent: when its first schedule exists it does
 * nothing; concurrent seeders (replicas starting together) take turns on an advisory lock, so
 * the later one finds it. Its meetings are published as events flagged `sandbox` (state for
 * other contexts' projections, not news: nobody is notified).
 * Returns whether it wrote anything.
 */
export async function seedSchedulingSandbox(
  db: Db,
  clock: Clock,
  seed: string,
  bookingBaseUrl = DEFAULT_BOOKING_BASE_URL,
): Promise<boolean> {
  const now = clock.now();
  const epoch = new Date(SANDBOX.epoch);
  const first = SCHEDULING_SANDBOX.schedules[0];
  if (!first) return false;
  return db.tx(async (q) => {
    if (db.kind === "pg") await q.query("SELECT pg_advisory_xact_lock(hashtext('scheduling:sandbox'))");
    const w = txStore(q);
    const firstOrg = sandboxOrgId(seed, first.org);
    if (await w.findSchedule(firstOrg, sandboxScheduleId(seed, first.label))) return false;

    const hosts = new Map<string, HostRecord>();
    for (const h of SCHEDULING_SANDBOX.hosts) {
      const { user, org } = sandboxUser(h.user);
      const host = await createHost(q, {
        userId: sandboxUserId(seed, user.label),
        orgId: sandboxOrgId(seed, org.label),
        // As identity's sandbox spells the address.
        email: sandboxUserEmail(user, org),
        firstName: user.firstName,
        lastName: user.lastName,
        timeZone: h.timeZone,
        workingHours: h.workingHours,
      });
      hosts.set(h.user, host);
    }

    const schedules = new Map<string, ScheduleRecord>();
    for (const s of SCHEDULING_SANDBOX.schedules) {
      const createdAt = new Date(epoch.getTime() + s.createdDay * DAY_MS);
      const schedule = await createSchedule(q, {
        id: sandboxScheduleId(seed, s.label),
        orgId: sandboxOrgId(seed, s.org),
        name: s.name,
        hostUserIds: s.hosts.map((label) => sandboxUserId(seed, label)),
        description: s.description,
        status: s.status,
        durationMinutes: s.durationMinutes,
        bookingPeriods: s.bookingPeriods,
        stepMinutes: s.stepMinutes,
        timeZone: s.timeZone,
        bookingWindow: s.bookingWindow,
        matchingForm: s.matchingForm,
        surveyQuestions: s.surveyQuestions,
        routing: routingOf(seed, s.routing),
        location: s.location,
        sendConfirmations: s.sendConfirmations,
        ...(s.unpublished ? { publishedAt: null } : {}),
        createdAt,
        updatedAt: new Date(epoch.getTime() + s.updatedDay * DAY_MS),
      });
      schedules.set(s.label, schedule);
    }

    for (const b of SCHEDULING_SANDBOX.busyBlocks) {
      const host = hosts.get(b.host);
      if (!host) throw new Error(`sandbox busy block ${b.label} names an unknown host`);
      await w.insertBusyBlock({
        id: sandboxBusyBlockId(seed, b.label),
        userId: host.userId,
        start: onWorkingDay(now, host.timeZone, b.workingDays, b.localStart),
        end: onWorkingDay(now, host.timeZone, b.workingDays, b.localEnd),
      });
    }
    for (const m of SCHEDULING_SANDBOX.meetings) await seedMeeting(w, seed, m, hosts, schedules, now, bookingBaseUrl);
    return true;
  });
}

const BENCH_ZONES = ["America/New_York", "Europe/Berlin", "Asia/Kolkata", "Australia/Sydney", "America/Los_Angeles"];

/**
 * A schedule with `hostCount` hosts of `orgId` working every day, all routed to by the
 * returned form values, so availability computes slots for every host over the whole
 * booking window: the benchmark's worst realistic case. Idempotent per org.
 */
export async function seedBenchSchedule(
  db: Db,
  opts: { orgId: string; hostCount: number; clock: Clock },
): Promise<{ scheduleId: string; formValues: Record<string, FormAnswer> }> {
  const { orgId, hostCount, clock } = opts;
  const scheduleId = seededId("sched_", orgId, "bench:schedule");
  const formValues = { team: "bench" };
  await db.tx(async (q) => {
    if (await txStore(q).findSchedule(orgId, scheduleId)) return;
    const hostUserIds: string[] = [];
    for (let i = 0; i < hostCount; i++) {
      const userId = seededId("usr_", orgId, `bench:host:${i}`);
      await createHost(q, {
        userId,
        orgId,
        email: `bench.host${i}@bench.example`,
        firstName: "Bench",
        lastName: `Host ${i}`,
        timeZone: BENCH_ZONES[i % BENCH_ZONES.length] ?? "UTC",
        workingHours: [1, 2, 3, 4, 5, 6, 7].map((d) => ({ weekday: d, start: "08:00", end: "18:00" }) as WorkingHours),
      });
      hostUserIds.push(userId);
    }
    const half = Math.ceil(hostUserIds.length / 2);
    await createSchedule(q, {
      id: scheduleId,
      orgId,
      name: "Benchmark round robin",
      hostUserIds,
      durationMinutes: 30,
      bookingPeriods: [30, 60],
      stepMinutes: 30,
      bookingWindow: { minAdvanceMinutes: 60, maxAdvanceDays: 30 },
      matchingForm: [{ key: "team", label: "Team", type: "select", options: ["bench"], required: true }],
      routing: {
        rules: [
          {
            when: [{ fieldKey: "team", anyOf: ["bench"] }],
            hostGroups: [hostUserIds.slice(0, half), hostUserIds.slice(half)],
          },
        ],
        fallback: [],
      },
      location: { type: "video", provider: "video_a", joinUrl: null, address: null },
      createdAt: new Date(clock.now().getTime() - HOUR_MS),
    });
  });
  return { scheduleId, formValues };
}
