import { randomBytes } from "node:crypto";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ConnectError } from "@connectrpc/connect";
import { ProblemSchema } from "@platform/contracts/common";
import { MeetingService, SmartScheduleService } from "@platform/contracts/scheduling";
import { ManualClock } from "@platform/kit/clock";
import { type Db, openPg } from "@platform/kit/db";
import { newId } from "@platform/kit/ids";
import { kitMigrations, migrate } from "@platform/kit/migrate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScheduleRecord } from "../src/domain/model.js";
import { build, schedulingMigrations } from "../src/server.js";
import {
  anAttendee,
  BOOKING_BASE_URL,
  CURSOR_SECRET,
  callerOf,
  formValues,
  givenHost,
  givenSchedule,
  recordingCalendar,
  SLOT_TOKEN_SECRET,
  SURVEY,
  silentLogger,
  TEST_START,
} from "./builders.js";

// The double-booking guard under real concurrency: PGlite runs one transaction at a time, so
// only a real Postgres shows that the exclusion constraint, not a read-then-insert check,
// decides between simultaneous bookings of one slot.
const ADMIN_URL = process.env.POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const database = `scheduling_it_${randomBytes(4).toString("hex")}`;

let admin: Db;
let db: Db;
let caller: ReturnType<typeof callerOf>;
let schedule: ScheduleRecord;
const orgId = newId("org_");
const clock = new ManualClock(TEST_START);
const calendar = recordingCalendar();

beforeAll(async () => {
  admin = openPg({ url: ADMIN_URL, schema: "public", max: 1 });
  await admin.exec(`CREATE DATABASE ${database}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  db = openPg({ url: url.toString(), schema: "scheduling", max: 12 });
  await migrate(db, [kitMigrations, schedulingMigrations]);
  const host = await givenHost(db, orgId);
  schedule = await givenSchedule(db, orgId, [host]);
  const { routes } = build({
    db,
    clock,
    logger: silentLogger,
    cursorSecret: CURSOR_SECRET,
    slotTokenSecret: SLOT_TOKEN_SECRET,
    bookingBaseUrl: BOOKING_BASE_URL,
    calendar,
  });
  caller = callerOf(routes, clock);
});
afterAll(async () => {
  await db?.close();
  await admin?.exec(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin?.close();
});

async function tokenAt(start: string): Promise<string> {
  const from = new Date(start);
  const res = await caller(SmartScheduleService, orgId).getAvailability({
    scheduleId: schedule.id,
    formValues: formValues({ region: "EMEA" }),
    rangeStart: timestampFromDate(from),
    rangeEnd: timestampFromDate(new Date(from.getTime() + 30 * 60_000)),
  });
  const token = res.hostGroups[0]?.hosts[0]?.slots[0]?.slotToken;
  if (!token) throw new Error(`no slot at ${start}`);
  return token;
}

const bookWith = (slotToken: string, idempotencyKey?: string) =>
  caller(MeetingService, orgId, idempotencyKey ? { idempotencyKey } : {}).bookMeeting({
    slotToken,
    attendee: anAttendee(),
    formValues: formValues({ region: "EMEA" }),
    surveyResponses: SURVEY,
  });

/** The meeting ids of the fulfilled calls, and the problems (with extensions) of the rejected ones. */
async function outcomes(calls: Promise<{ meeting?: { id: string } }>[]) {
  const settled = await Promise.allSettled(calls);
  return {
    ids: settled.flatMap((s) => (s.status === "fulfilled" ? [s.value.meeting?.id] : [])),
    problems: settled.flatMap((s) => {
      if (s.status === "fulfilled") return [];
      const p = ConnectError.from(s.reason).findDetails(ProblemSchema)[0];
      return [{ name: p?.name ?? String(s.reason), extensions: p?.extensions }];
    }),
  };
}

const liveMeetingsAt = async (start: string) =>
  (
    await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM scheduling.meetings WHERE start_time = $1 AND canceled_at IS NULL",
      [new Date(start)],
    )
  )[0]?.n;

describe("on a real Postgres", () => {
  it("books one slot once: 10 concurrent bookings with 10 keys, one success and nine slot-conflicts", async () => {
    for (const start of ["2026-01-16T09:00:00Z", "2026-01-16T10:00:00Z", "2026-01-16T11:00:00Z"]) {
      const token = await tokenAt(start);
      calendar.calls.length = 0;
      const { ids, problems } = await outcomes(Array.from({ length: 10 }, () => bookWith(token)));
      expect(ids).toHaveLength(1);
      expect(problems).toEqual(Array(9).fill({ name: "slot-conflict", extensions: { rerunAvailability: true } }));
      expect(await liveMeetingsAt(start)).toBe(1);
      // Every losing booking removed the calendar event it had created.
      const creates = calendar.calls.filter((c) => c.op === "create").map((c) => c.eventId);
      const deletes = calendar.calls.filter((c) => c.op === "delete").map((c) => c.eventId);
      expect(creates).toHaveLength(10);
      expect(deletes).toHaveLength(9);
      expect(creates.filter((id) => !deletes.includes(id))).toHaveLength(1);
    }
  });

  it("executes concurrent duplicates of one key once and replays the rest", async () => {
    const start = "2026-01-16T13:00:00Z";
    const token = await tokenAt(start);
    const { ids, problems } = await outcomes(Array.from({ length: 5 }, () => bookWith(token, "same-key")));
    expect(problems).toEqual([]);
    expect(new Set(ids).size).toBe(1);
    expect(await liveMeetingsAt(start)).toBe(1);
  });
});
