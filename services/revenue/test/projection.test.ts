import { create, toJson } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { MeetingBookedSchema, MeetingCanceledSchema } from "@platform/contracts/events/scheduling";
import { DealSchemaDefinitionSchema, RevenueAdminService } from "@platform/contracts/revenue";
import { type Meeting, MeetingSchema } from "@platform/contracts/scheduling";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import { newId } from "@platform/kit/ids";
import { InProcessBus } from "@platform/kit/in-process-bus";
import { toBusMessage } from "@platform/kit/outbox";
import { eventually } from "@platform/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRevenueConsumers } from "../src/events/subscriptions.js";
import { txStore } from "../src/store/index.js";
import { createTestRevenue, problemOf, silentLogger, type TestRevenue } from "./builders.js";

let t: TestRevenue;
let bus: InProcessBus;

beforeAll(async () => {
  t = await createTestRevenue();
  bus = new InProcessBus({ logger: silentLogger });
  await startRevenueConsumers({ db: t.db, bus, logger: silentLogger });
});
afterAll(async () => {
  await bus.close();
  await t.close();
});

function aMeeting(orgId: string, preview = false) {
  return create(MeetingSchema, {
    id: newId("mtg_"),
    orgId,
    title: "Intro",
    attendee: { email: "Ada@Analytical.example", firstName: "Ada", lastName: "Lovelace" },
    additionalAttendees: ["charles@analytical.example"],
    startTime: timestampFromDate(new Date("2026-03-04T10:00:00Z")),
    endTime: timestampFromDate(new Date("2026-03-04T10:30:00Z")),
    status: "scheduled",
    smartScheduling: { scheduleId: "sched_x", preview },
  });
}

// Scheduling's meeting events as the contract defines them (the payloads scheduling publishes).
interface MeetingEvent {
  type: string;
  meeting: Meeting;
  data: unknown;
  at: Date;
}

function meetingBookedEvent(meeting: Meeting, at: Date, sandbox = false): MeetingEvent {
  const data = toJson(MeetingBookedSchema, create(MeetingBookedSchema, { meeting, sandbox }));
  return { type: EVENT_TYPES.meetingBooked, meeting, data, at };
}

function meetingCanceledEvent(meeting: Meeting, reason: string, sendNotifications: boolean, at: Date): MeetingEvent {
  const data = toJson(MeetingCanceledSchema, create(MeetingCanceledSchema, { meeting, reason, sendNotifications }));
  return { type: EVENT_TYPES.meetingCanceled, meeting, data, at };
}

async function publish(e: MeetingEvent) {
  await bus.publish(TOPICS.scheduling, [
    toBusMessage(
      {
        id: newId("evt_"),
        type: e.type,
        source: "scheduling",
        subject: e.meeting.id,
        time: e.at.toISOString(),
        data: e.data,
      },
      e.meeting.orgId,
    ),
  ]);
}

describe("meeting projection", () => {
  it("keeps booked meetings with their lower-cased attendee emails, sandbox ones and previews included", async () => {
    const orgId = newId("org_");
    const booked = aMeeting(orgId);
    const preview = aMeeting(orgId, true);
    await publish(meetingBookedEvent(booked, new Date("2026-03-01T00:00:00Z"), true));
    await publish(meetingBookedEvent(preview, new Date("2026-03-01T00:00:00Z")));
    const stored = await eventually("projected meeting", () => txStore(t.db).findMeeting(orgId, booked.id));
    expect(stored.attendeeEmails).toEqual(["ada@analytical.example", "charles@analytical.example"]);
    expect(stored.preview).toBe(false);
    // A preview booking is a meeting Q&As and insights may name; only the deal links skip it.
    const kept = await eventually("projected preview", () => txStore(t.db).findMeeting(orgId, preview.id));
    expect(kept.preview).toBe(true);
  });

  it("keeps the preview flag when a preview booking's cancellation arrives first", async () => {
    const orgId = newId("org_");
    const preview = aMeeting(orgId, true);
    await publish(
      meetingCanceledEvent({ ...preview, status: "canceled" }, "", false, new Date("2026-03-02T00:00:00Z")),
    );
    const stored = await eventually("canceled preview", () => txStore(t.db).findMeeting(orgId, preview.id));
    expect(stored).toMatchObject({ preview: true, canceled: true });
  });

  it("stays canceled when the cancellation arrives before the booking", async () => {
    const orgId = newId("org_");
    const meeting = aMeeting(orgId);
    await publish(
      meetingCanceledEvent({ ...meeting, status: "canceled" }, "", false, new Date("2026-03-02T00:00:00Z")),
    );
    await publish(meetingBookedEvent(meeting, new Date("2026-03-01T00:00:00Z")));
    const stored = await eventually("canceled meeting", async () => {
      const m = await txStore(t.db).findMeeting(orgId, meeting.id);
      return m?.canceled ? m : undefined;
    });
    expect(stored.canceled).toBe(true);
    expect(EVENT_TYPES.meetingBooked).toBe("scheduling.smartscheduler.booked");
    expect(TOPICS.scheduling).toBe("platform.scheduling.v1");
  });
});

describe("admin plane", () => {
  it("lists and reads deal schemas behind the admin secret only", async () => {
    const org = await t.givenOrg();
    const admin = t.admin(RevenueAdminService);
    const { schemas } = await admin.listDealSchemas({ orgId: org.orgId });
    expect(schemas.map((s) => s.id)).toEqual([org.schema.id]);
    const { schema } = await admin.getDealSchema({ schemaId: org.schema.id });
    expect(schema?.stages.map((s) => `${s.name}:${s.outcome}`)).toContain("Won:won");
    expect(schema?.insightFields.map((f) => f.schemaType)).toHaveLength(8);
    expect(create(DealSchemaDefinitionSchema, schema).isDefault).toBe(true);
    expect(await problemOf(admin.getDealSchema({ schemaId: newId("schm_") }))).toBe("not-found");
    expect(
      await problemOf(t.admin(RevenueAdminService, "wrong-secret-0123456789").listDealSchemas({ orgId: org.orgId })),
    ).toBe("connect:Unauthenticated");
  });
});
