// The organization, host and schedule every booking*.test.ts books against, and the helpers that
// get a slot token and build a booking request.
import type { JsonValue } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { MeetingService, SmartScheduleService } from "@platform/contracts/scheduling";
import { newId } from "@platform/kit/ids";
import { afterAll, beforeAll, beforeEach } from "vitest";
import type { HostRecord, ScheduleRecord } from "../src/domain/model.js";
import {
  anAttendee,
  type CallerOptions,
  createTestScheduling,
  formValues,
  givenHost,
  givenSchedule,
  SURVEY,
  type TestScheduling,
} from "./builders.js";

export let t: TestScheduling;
export const acme = newId("org_");
export const other = newId("org_");
export let ada: HostRecord;
export let schedule: ScheduleRecord;

export const meetings = (orgId = acme, opts: CallerOptions = {}) => t.caller(MeetingService, orgId, opts);
export const EMEA = { region: "EMEA" };
export const MINUTE = 60_000;

/** A slot token of the schedule's first host, for the slot starting at `start` (16 January 09:00 UTC by default). */
export async function tokenFor(
  opts: {
    start?: string;
    values?: Record<string, JsonValue>;
    preview?: boolean;
    orgId?: string;
    scheduleId?: string;
  } = {},
): Promise<string> {
  const start = new Date(opts.start ?? "2026-01-16T09:00:00Z");
  const res = await t.caller(SmartScheduleService, opts.orgId ?? acme).getAvailability({
    scheduleId: opts.scheduleId ?? schedule.id,
    formValues: formValues(opts.values ?? EMEA),
    preview: opts.preview ?? false,
    rangeStart: timestampFromDate(start),
    rangeEnd: timestampFromDate(new Date(start.getTime() + 60 * MINUTE)),
  });
  const token = res.hostGroups[0]?.hosts[0]?.slots[0]?.slotToken;
  if (!token) throw new Error(`no slot at ${start.toISOString()}`);
  return token;
}

export const booking = (slotToken: string, extra: Record<string, unknown> = {}) => ({
  slotToken,
  attendee: anAttendee(),
  formValues: formValues(EMEA),
  surveyResponses: SURVEY,
  ...extra,
});

export const meetingCount = async () =>
  (await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM scheduling.meetings"))[0]?.n;

/** Registers the hooks that open the service once and give Acme a fresh host and schedule before each test. */
export function useBookingWorld(): void {
  beforeAll(async () => {
    t = await createTestScheduling();
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.reset();
    ada = await givenHost(t.db, acme, { firstName: "Ada", lastName: "Host", displayName: "Ada Host" });
    schedule = await givenSchedule(t.db, acme, [ada]);
  });
}
