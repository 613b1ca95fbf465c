import { timestampDate } from "@bufbuild/protobuf/wkt";
import { SmartScheduleService } from "@platform/contracts/scheduling";
import { newId } from "@platform/kit/ids";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { HostRecord } from "../src/domain/model.js";
import {
  createTestScheduling,
  givenHost,
  givenSchedule,
  problemDetailOf,
  problemOf,
  type TestScheduling,
} from "./builders.js";

let t: TestScheduling;
const acme = newId("org_");
const other = newId("org_");
let hosts: HostRecord[];

const schedules = (orgId = acme) => t.caller(SmartScheduleService, orgId);
const at = (iso: string) => new Date(iso);

beforeAll(async () => {
  t = await createTestScheduling();
});
afterAll(() => t.close());
beforeEach(async () => {
  await t.reset();
  hosts = [
    await givenHost(t.db, acme, { displayName: "Zed Host" }),
    await givenHost(t.db, acme, { displayName: "Amy Host" }),
  ];
  const named = (name: string, created: string, updated: string, extra = {}) =>
    givenSchedule(t.db, acme, hosts, { name, createdAt: at(created), updatedAt: at(updated), ...extra });
  await named("Intro call", "2025-01-01T00:00:00Z", "2025-03-01T00:00:00Z");
  await named("enterprise Demo", "2025-01-02T00:00:00Z", "2025-02-01T00:00:00Z");
  await named("Renewal", "2025-01-03T00:00:00Z", "2025-04-01T00:00:00Z", { status: "disabled", publishedAt: null });
  await named("Draft demo", "2025-01-04T00:00:00Z", "2025-05-01T00:00:00Z", { status: "draft" });
  await named("Support intake", "2025-01-05T00:00:00Z", "2025-01-15T00:00:00Z");
  const foreignHost = await givenHost(t.db, other);
  await givenSchedule(t.db, other, [foreignHost], { name: "Other org demo" });
});

const names = async (req: Parameters<ReturnType<typeof schedules>["listSmartSchedules"]>[0]) =>
  (await schedules().listSmartSchedules(req)).schedules.map((s) => s.name);

describe("ListSmartSchedules", () => {
  it("lists active schedules by default, newest change first, never drafts or other orgs'", async () => {
    expect(await names({})).toEqual(["Intro call", "enterprise Demo", "Support intake"]);
    expect(await names({ status: "active" })).toEqual(["Intro call", "enterprise Demo", "Support intake"]);
  });

  it("lists disabled ones too with status all, but never drafts", async () => {
    expect(await names({ status: "all" })).toEqual(["Renewal", "Intro call", "enterprise Demo", "Support intake"]);
  });

  it("refuses other status filters", async () => {
    expect(await problemOf(schedules().listSmartSchedules({ status: "draft" }))).toBe("invalid-filter");
    expect(await problemOf(schedules().listSmartSchedules({ status: "ACTIVE" }))).toBe("invalid-filter");
  });

  it("filters by a case-insensitive name substring, literally", async () => {
    expect(await names({ name: "DEMO", status: "all" })).toEqual(["enterprise Demo"]);
    expect(await names({ name: "%" })).toEqual([]);
  });

  it("sorts by name case-insensitively, and by creation time", async () => {
    expect(await names({ sort: "name" })).toEqual(["enterprise Demo", "Intro call", "Support intake"]);
    expect(await names({ sort: "-name" })).toEqual(["Support intake", "Intro call", "enterprise Demo"]);
    expect(await names({ sort: "createdAt", status: "all" })).toEqual([
      "Intro call",
      "enterprise Demo",
      "Renewal",
      "Support intake",
    ]);
    const bad = await problemDetailOf(schedules().listSmartSchedules({ sort: "status" }));
    expect(bad).toMatchObject({
      name: "invalid-sort-field",
      extensions: { field: "status", allowedSortFields: ["updatedAt", "createdAt", "name"] },
    });
  });

  it("pages with keyset cursors bound to the sort", async () => {
    const first = await schedules().listSmartSchedules({ limit: 2, status: "all", sort: "name" });
    expect(first.schedules.map((s) => s.name)).toEqual(["enterprise Demo", "Intro call"]);
    expect(first.nextCursor).not.toBe("");
    const second = await schedules().listSmartSchedules({
      limit: 2,
      status: "all",
      sort: "name",
      cursor: first.nextCursor,
    });
    expect(second.schedules.map((s) => s.name)).toEqual(["Renewal", "Support intake"]);
    expect(second.nextCursor).toBe("");
    expect(await problemOf(schedules().listSmartSchedules({ sort: "-name", cursor: first.nextCursor }))).toBe(
      "invalid-cursor",
    );
    expect(await problemOf(schedules().listSmartSchedules({ sort: "name", cursor: `${first.nextCursor}x` }))).toBe(
      "invalid-cursor",
    );
  });

  it("returns the summary fields", async () => {
    const [item] = (await schedules().listSmartSchedules({ status: "all", sort: "-updatedAt", limit: 1 })).schedules;
    expect(item).toMatchObject({
      name: "Renewal",
      status: "disabled",
      durationMinutes: 30,
      timeZone: "America/New_York",
    });
    expect(item?.publishTime).toBeUndefined();
    expect(item?.updateTime && timestampDate(item.updateTime)).toEqual(at("2025-04-01T00:00:00Z"));
  });
});

describe("GetSmartSchedule", () => {
  it("returns the detail with booking rules and assignees", async () => {
    const created = await givenSchedule(t.db, acme, hosts, { name: "Detail" });
    const { schedule } = await schedules().getSmartSchedule({ scheduleId: created.id });
    expect(schedule).toMatchObject({
      id: created.id,
      name: "Detail",
      description: "A first call",
      status: "active",
      durationMinutes: 30,
      bookingPeriods: [15, 30, 60],
      timeZone: "America/New_York",
      bookingWindow: { minAdvanceMinutes: 60, maxAdvanceDays: 14 },
      matchingFormFields: [
        { key: "region", label: "Region", type: "select", options: ["EMEA", "AMER", "APAC"], required: true },
        { key: "products", label: "Products", type: "multi-select", options: ["crm", "voice"], required: false },
      ],
      surveyQuestions: [
        {
          key: "what-would-you-like-to-discuss",
          label: "What would you like to discuss?",
          type: "long-text",
          required: true,
        },
        { key: "anything-else", label: "Anything else?", type: "text", required: false },
      ],
    });
    expect(schedule?.assignees.map((a) => a.displayName)).toEqual(["Amy Host", "Zed Host"]);
    expect(schedule?.publishTime && timestampDate(schedule.publishTime)).toEqual(at("2025-06-01T00:00:00Z"));
  });

  it("leaves the publish time unset when unpublished", async () => {
    const created = await givenSchedule(t.db, acme, hosts, { status: "disabled", publishedAt: null });
    const { schedule } = await schedules().getSmartSchedule({ scheduleId: created.id });
    expect(schedule?.status).toBe("disabled");
    expect(schedule?.publishTime).toBeUndefined();
  });

  it("hides drafts, unknown ids and other orgs' schedules alike", async () => {
    const draft = await givenSchedule(t.db, acme, hosts, { status: "draft" });
    const foreign = await givenSchedule(t.db, other, [await givenHost(t.db, other)]);
    for (const scheduleId of [draft.id, foreign.id, newId("sched_")]) {
      expect(await problemOf(schedules().getSmartSchedule({ scheduleId }))).toBe("schedule-not-found");
    }
    expect(await problemOf(schedules().getSmartSchedule({ scheduleId: "mtg_x" }))).toBe("invalid-resource-id");
  });
});

describe("booking periods", () => {
  // A slot token carries the booking's length in 12 bits (src/domain/slot-token.ts).
  it("stores periods up to 4,095 minutes and refuses a longer one, which no slot token could carry", async () => {
    const longest = await givenSchedule(t.db, acme, hosts, { durationMinutes: 4095, bookingPeriods: [30, 4095] });
    expect(longest.bookingPeriods).toEqual([30, 4095]);
    await expect(givenSchedule(t.db, acme, hosts, { durationMinutes: 30, bookingPeriods: [30, 4096] })).rejects.toThrow(
      /schedules_booking_periods_fit_slot_tokens/,
    );
    await expect(givenSchedule(t.db, acme, hosts, { durationMinutes: 30, bookingPeriods: [0, 30] })).rejects.toThrow(
      /schedules_booking_periods_fit_slot_tokens/,
    );
  });
});
