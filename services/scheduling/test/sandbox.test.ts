import { timestampDate } from "@bufbuild/protobuf/wkt";
import { MeetingService, SmartScheduleService } from "@platform/contracts/scheduling";
import { EVENT_TYPES } from "@platform/kit/events";
import { newId } from "@platform/kit/ids";
import {
  SANDBOX,
  SCHEDULING_SANDBOX,
  sandboxMeetingId,
  sandboxOrgId,
  sandboxScheduleId,
  sandboxUserId,
} from "@platform/sandbox";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { seedBenchSchedule, seedSchedulingSandbox } from "../src/sandbox.js";
import { anAttendee, createTestScheduling, formValues, outboxRows, type TestScheduling } from "./builders.js";

const SEED = "sandbox-test";
let t: TestScheduling;
const acme = sandboxOrgId(SEED, "acme");
const umbrella = sandboxOrgId(SEED, "umbrella");

beforeAll(async () => {
  t = await createTestScheduling();
});
afterAll(() => t.close());
beforeEach(async () => {
  await t.reset();
});

describe("seedSchedulingSandbox", () => {
  it("seeds once; seeding again changes nothing", async () => {
    expect(await seedSchedulingSandbox(t.db, t.clock, SEED)).toBe(true);
    const count = () => t.db.query("SELECT id FROM scheduling.meetings ORDER BY id");
    const before = await count();
    expect(await seedSchedulingSandbox(t.db, t.clock, SEED)).toBe(false);
    expect(await count()).toEqual(before);
  });

  it("publishes its meetings as events flagged sandbox, so projections see them and nobody is notified", async () => {
    await seedSchedulingSandbox(t.db, t.clock, SEED);
    const rows = await outboxRows(t.db);
    const booked = rows.filter((r) => r.type === EVENT_TYPES.meetingBooked);
    expect(booked.map((r) => r.subject).sort()).toEqual(
      SCHEDULING_SANDBOX.meetings.map((m) => sandboxMeetingId(SEED, m.label)).sort(),
    );
    for (const r of booked) expect(r.data).toMatchObject({ sandbox: true, meeting: { id: r.subject } });
    const canceled = rows.filter((r) => r.type === EVENT_TYPES.meetingCanceled);
    expect(canceled.map((r) => r.subject)).toEqual([sandboxMeetingId(SEED, "acme-intro-canceled")]);
    expect(canceled[0]?.data).toMatchObject({ sandbox: true, meeting: { status: "canceled" } });
  });

  it("makes identity's sandbox users the hosts, with the same ids and addresses, in several zones", async () => {
    await seedSchedulingSandbox(t.db, t.clock, SEED);
    const hosts = await t.db.query<{ user_id: string; org_id: string; email: string; time_zone: string }>(
      "SELECT user_id, org_id, email, time_zone FROM scheduling.hosts",
    );
    const acmeOrg = SANDBOX.organizations.find((o) => o.label === "acme");
    const owner = acmeOrg?.users.find((u) => u.label === "acme-owner");
    expect(hosts).toContainEqual({
      user_id: sandboxUserId(SEED, "acme-owner"),
      org_id: acme,
      email: `${owner?.firstName}.${owner?.lastName}@acme.example`.toLowerCase(),
      time_zone: "America/New_York",
    });
    expect(new Set(hosts.map((h) => h.time_zone))).toEqual(
      new Set(["America/New_York", "Europe/Berlin", "Asia/Kolkata", "Australia/Sydney", "America/Los_Angeles"]),
    );
  });

  it("serves Acme's active schedules, the disabled one on request, never the draft", async () => {
    await seedSchedulingSandbox(t.db, t.clock, SEED);
    const api = t.caller(SmartScheduleService, acme);
    expect((await api.listSmartSchedules({ sort: "name" })).schedules.map((s) => s.name)).toEqual([
      "Enterprise demo",
      "Intro call",
    ]);
    const all = (await api.listSmartSchedules({ status: "all", sort: "name" })).schedules;
    expect(all.map((s) => [s.name, s.status, s.publishTime !== undefined])).toEqual([
      ["Enterprise demo", "active", true],
      ["Intro call", "active", true],
      ["Partner onboarding", "disabled", false],
    ]);
    const umbrellaNames = (await t.caller(SmartScheduleService, umbrella).listSmartSchedules({})).schedules;
    expect(umbrellaNames.map((s) => s.name)).toEqual(["Medical information request"]);
  });

  it("routes the intro call by region and books one of its slots", async () => {
    await seedSchedulingSandbox(t.db, t.clock, SEED);
    const scheduleId = sandboxScheduleId(SEED, "acme-intro");
    const res = await t.caller(SmartScheduleService, acme).getAvailability({
      scheduleId,
      formValues: formValues({ region: "EMEA" }),
    });
    expect(res.hostGroups.map((g) => g.hosts.map((h) => h.host?.userId))).toEqual([
      [sandboxUserId(SEED, "acme-admin")],
      [sandboxUserId(SEED, "acme-owner")],
    ]);
    const slot = res.hostGroups[0]?.hosts[0]?.slots[0];
    expect(slot).toBeDefined();
    const { meeting } = await t.caller(MeetingService, acme).bookMeeting({
      slotToken: slot?.slotToken ?? "",
      attendee: anAttendee(),
      formValues: formValues({ region: "EMEA" }),
      surveyResponses: { "What would you like to discuss?": "Everything" },
    });
    expect(meeting?.host?.userId).toBe(sandboxUserId(SEED, "acme-admin"));
  });

  it("has a completed, a canceled and upcoming meetings, relative to the clock", async () => {
    await seedSchedulingSandbox(t.db, t.clock, SEED);
    const status = async (label: string) =>
      (await t.caller(MeetingService, acme).getMeeting({ meetingId: sandboxMeetingId(SEED, label) })).meeting;
    expect((await status("acme-intro-completed"))?.status).toBe("completed");
    expect((await status("acme-intro-canceled"))?.status).toBe("canceled");
    const upcoming = await status("acme-intro-upcoming-amer");
    expect(upcoming).toMatchObject({ status: "scheduled", title: "Intro call: Alan Turing" });
    expect(upcoming?.smartScheduling?.campaign).toMatchObject({ source: "newsletter", medium: "email" });
    expect(upcoming?.startTime && timestampDate(upcoming.startTime).getTime()).toBeGreaterThan(t.clock.now().getTime());
    const labels = SCHEDULING_SANDBOX.meetings.filter((m) => !m.label.startsWith("umbrella")).map((m) => m.label);
    for (const label of labels) expect((await status(label))?.id).toBe(sandboxMeetingId(SEED, label));
  });
});

describe("seedBenchSchedule", () => {
  it("creates a schedule with the hosts all routed to and slots over the whole window, once", async () => {
    const orgId = newId("org_");
    const bench = await seedBenchSchedule(t.db, { orgId, hostCount: 20, clock: t.clock });
    expect(await seedBenchSchedule(t.db, { orgId, hostCount: 20, clock: t.clock })).toEqual(bench);
    const res = await t.caller(SmartScheduleService, orgId).getAvailability({
      scheduleId: bench.scheduleId,
      formValues: formValues(bench.formValues),
    });
    const hosts = res.hostGroups.flatMap((g) => g.hosts);
    expect(hosts).toHaveLength(20);
    // Every day 08:00-18:00 local for 30 days, every 30 minutes: roughly 20 slots a day.
    for (const h of hosts) expect(h.slots.length).toBeGreaterThan(500);
  });
});
