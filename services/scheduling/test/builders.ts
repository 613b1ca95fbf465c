import { type DescService, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { type Value, ValueSchema } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { type Clock, ManualClock } from "@platform/kit/clock";
import type { Routes } from "@platform/kit/connect";
import { type Db, openPglite, pgliteDb, type Queryable } from "@platform/kit/db";
import { newId } from "@platform/kit/ids";
import { createLogger } from "@platform/kit/logger";
import { kitMigrations, migrate } from "@platform/kit/migrate";
import { type CallerOptions, callerOf as kitCallerOf } from "@platform/kit/testing";
import {
  type CalendarEventInput,
  type CalendarProvider,
  simulatedCalendar,
  simulatedConferencing,
} from "../src/application/providers.js";
import type { HostRecord, ScheduleRecord } from "../src/domain/model.js";
import { createHost, createSchedule, type HostDefinition, type ScheduleDefinition } from "../src/sandbox.js";
import { build, SCHEDULING_SCHEMA, schedulingMigrations } from "../src/server.js";

export const CONTEXT_SECRET = "test-context-secret-0123456789";
export const CURSOR_SECRET = "test-cursor-secret-0123456789";
export const SLOT_TOKEN_SECRET = "test-slot-token-secret-0123456789";
export const BOOKING_BASE_URL = "https://book.test.example";

/** A Thursday, noon UTC. */
export const TEST_START = "2026-01-15T12:00:00Z";

export const SCOPES = ["smart-scheduling:read", "smart-scheduling:write"];

export const silentLogger = createLogger("scheduling-test", "silent");

type PGlite = Awaited<ReturnType<typeof openPglite>>;

/** A migrated scheduling schema on an in-memory PGlite. */
export async function openTestDb(): Promise<{ pglite: PGlite; db: Db }> {
  const pglite = await openPglite();
  const db = pgliteDb(pglite, SCHEDULING_SCHEMA);
  await migrate(db, [kitMigrations, schedulingMigrations]);
  return { pglite, db };
}

/** The service's API routes as an integrator request acting on `orgId` reaches them. */
export function callerOf(routes: Routes, clock: Clock) {
  return kitCallerOf(routes, clock, { contextSecret: CONTEXT_SECRET, defaultScopes: SCOPES });
}

/** A calendar call the recording provider saw. */
export type CalendarCall =
  | { op: "create"; eventId: string; event: CalendarEventInput }
  | { op: "update"; eventId: string; event: CalendarEventInput }
  | { op: "delete"; eventId: string };

/** The simulated calendar, recording every call; `failNext` makes the next call of an operation throw. */
export function recordingCalendar(): CalendarProvider & { calls: CalendarCall[]; failNext: Set<CalendarCall["op"]> } {
  const inner = simulatedCalendar();
  const calls: CalendarCall[] = [];
  const failNext = new Set<CalendarCall["op"]>();
  const fail = (op: CalendarCall["op"]) => {
    if (!failNext.delete(op)) return;
    throw new Error(`calendar ${op} failed`);
  };
  return {
    calls,
    failNext,
    async createEvent(event) {
      fail("create");
      const eventId = await inner.createEvent(event);
      calls.push({ op: "create", eventId, event });
      return eventId;
    },
    async updateEvent(eventId, event) {
      fail("update");
      calls.push({ op: "update", eventId, event });
    },
    async deleteEvent(eventId) {
      fail("delete");
      calls.push({ op: "delete", eventId });
    },
  };
}

export interface TestScheduling {
  pglite: PGlite;
  db: Db;
  clock: ManualClock;
  calendar: ReturnType<typeof recordingCalendar>;
  /** How many writes committed (the `onCommit` hook). */
  commits: () => number;
  caller<S extends DescService>(service: S, orgId: string, opts?: CallerOptions): Client<S>;
  /** Empties every table and rewinds the clock, so one instance serves a whole file. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

/** The scheduling service built over a fresh database, reached through in-process transports. */
export async function createTestScheduling(): Promise<TestScheduling> {
  const { pglite, db } = await openTestDb();
  const clock = new ManualClock(TEST_START);
  const calendar = recordingCalendar();
  let commits = 0;
  const { routes } = build({
    db,
    clock,
    logger: silentLogger,
    cursorSecret: CURSOR_SECRET,
    slotTokenSecret: SLOT_TOKEN_SECRET,
    bookingBaseUrl: BOOKING_BASE_URL,
    calendar,
    conferencing: simulatedConferencing(),
    onCommit: () => {
      commits += 1;
    },
  });
  return {
    pglite,
    db,
    clock,
    calendar,
    commits: () => commits,
    caller: callerOf(routes, clock),
    async reset() {
      await db.exec(`TRUNCATE scheduling.meeting_audit, scheduling.meetings, scheduling.busy_blocks,
        scheduling.schedule_hosts, scheduling.schedules, scheduling.hosts, scheduling.outbox,
        scheduling.idempotency_keys, scheduling.processed_events CASCADE`);
      clock.set(TEST_START);
      calendar.calls.length = 0;
      calendar.failNext.clear();
      commits = 0;
    },
    close: () => pglite.close(),
  };
}

/** Every day 09:00 to 17:00 UTC: slots are easy to reason about. */
export const OFFICE_HOURS = [1, 2, 3, 4, 5, 6, 7].map((weekday) => ({
  weekday: weekday as 1 | 2 | 3 | 4 | 5 | 6 | 7,
  start: "09:00",
  end: "17:00",
}));

export function givenHost(q: Queryable, orgId: string, overrides: Partial<HostDefinition> = {}): Promise<HostRecord> {
  const userId = overrides.userId ?? newId("usr_");
  return createHost(q, {
    userId,
    orgId,
    email: `${userId}@hosts.example`,
    firstName: "Hope",
    lastName: "Host",
    timeZone: "UTC",
    workingHours: OFFICE_HOURS,
    ...overrides,
  });
}

/**
 * An active schedule of `orgId`: 30 minutes (15, 30 or 60), every 30 minutes, booked 1 hour to
 * 14 days ahead, a required region select and two survey questions, video on video_a,
 * routing EMEA to the first host and everything else to all of them.
 */
export function givenSchedule(
  q: Queryable,
  orgId: string,
  hosts: HostRecord[],
  overrides: Partial<ScheduleDefinition> = {},
): Promise<ScheduleRecord> {
  const ids = hosts.map((h) => h.userId);
  return createSchedule(q, {
    orgId,
    name: "Intro call",
    hostUserIds: ids,
    description: "A first call",
    durationMinutes: 30,
    bookingPeriods: [15, 30, 60],
    stepMinutes: 30,
    timeZone: "America/New_York",
    bookingWindow: { minAdvanceMinutes: 60, maxAdvanceDays: 14 },
    matchingForm: [
      { key: "region", label: "Region", type: "select", options: ["EMEA", "AMER", "APAC"], required: true },
      { key: "products", label: "Products", type: "multi-select", options: ["crm", "voice"], required: false },
    ],
    surveyQuestions: [
      { label: "What would you like to discuss?", type: "long-text", required: true },
      { label: "Anything else?", type: "text", required: false },
    ],
    routing: {
      rules: [{ when: [{ fieldKey: "region", anyOf: ["EMEA"] }], hostGroups: [ids.slice(0, 1)] }],
      fallback: [ids],
    },
    location: { type: "video", provider: "video_a", joinUrl: null, address: null },
    sendConfirmations: true,
    createdAt: new Date("2025-06-01T00:00:00Z"),
    ...overrides,
  });
}

/** Form values as the request map carries them. */
export function formValues(values: Record<string, JsonValue>): Record<string, Value> {
  return Object.fromEntries(Object.entries(values).map(([key, v]) => [key, fromJson(ValueSchema, v)]));
}

export const anAttendee = (overrides: Record<string, string> = {}) => ({
  email: "ada@analytical.example",
  firstName: "Ada",
  lastName: "Lovelace",
  ...overrides,
});

export const SURVEY = { "What would you like to discuss?": "Pricing" };

export async function outboxRows(db: Db): Promise<{ type: string; key: string; subject: string; data: unknown }[]> {
  return db.query("SELECT type, key, subject, data FROM scheduling.outbox ORDER BY seq");
}

export {
  type CallerOptions,
  type CarriedProblem,
  problemDetailOf,
  problemOf,
  withHeaders,
} from "@platform/kit/testing";
