import { create, toJson } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, createClient } from "@connectrpc/connect";
import { CrmAdminService } from "@platform/contracts/crm";
import { MeetingBookedSchema, MeetingCanceledSchema } from "@platform/contracts/events/scheduling";
import { ManualClock } from "@platform/kit/clock";
import { errorInterceptor, inProcessTransport } from "@platform/kit/connect";
import { type Db, openPglite, pgliteDb } from "@platform/kit/db";
import { EVENT_TYPES, type EventEnvelope, TOPICS } from "@platform/kit/events";
import { newId } from "@platform/kit/ids";
import { InProcessBus } from "@platform/kit/in-process-bus";
import { createLogger } from "@platform/kit/logger";
import { kitMigrations, migrate } from "@platform/kit/migrate";
import { toBusMessage } from "@platform/kit/outbox";
import { callerOf as kitCallerOf } from "@platform/kit/testing";
import { startCrmConsumers } from "../src/events/subscriptions.js";
import { build, CRM_SCHEMA, crmMigrations } from "../src/server.js";

export const CONTEXT_SECRET = "test-context-secret-0123456789";
export const CURSOR_SECRET = "test-cursor-secret-0123456789";
export const SCOPES = ["accounts:read", "contacts:read", "transcripts:read"];
export const TEST_START = "2026-03-02T10:00:00Z";

const silent = createLogger("crm-test", "silent");

/** crm-data on an in-memory PGlite with its projection on an in-process bus. */
export async function createTestCrm() {
  const pglite = await openPglite();
  const db: Db = pgliteDb(pglite, CRM_SCHEMA);
  await migrate(db, [kitMigrations, crmMigrations]);
  const clock = new ManualClock(TEST_START);
  const bus = new InProcessBus({ logger: silent });
  const consumers = await startCrmConsumers({ db, bus, logger: silent });
  const { routes, adminRoutes } = build({ db, clock, cursorSecret: CURSOR_SECRET });
  const caller = kitCallerOf(routes, clock, { contextSecret: CONTEXT_SECRET, defaultScopes: SCOPES });
  const admin: Client<typeof CrmAdminService> = createClient(
    CrmAdminService,
    inProcessTransport(adminRoutes, [errorInterceptor(silent)]),
  );
  return {
    db,
    clock,
    bus,
    caller,
    admin,
    /** Publishes envelopes on their topic and waits until the projection consumed them. */
    async publish(topic: string, ...events: EventEnvelope[]) {
      await bus.publish(
        topic,
        events.map((e) => toBusMessage(e, "k")),
      );
      await bus.idle();
    },
    async close() {
      for (const c of consumers) await c.close();
      await bus.close();
      await pglite.close();
    },
  };
}

export type TestCrm = Awaited<ReturnType<typeof createTestCrm>>;

/** A canonical meeting as scheduling's events carry it. */
export function meetingOf(m: {
  id: string;
  orgId: string;
  start: Date;
  minutes?: number;
  updated: Date;
  attendee: string;
  additional?: string[];
  status?: string;
  preview?: boolean;
}) {
  return {
    id: m.id,
    orgId: m.orgId,
    host: {
      userId: "usr_host",
      email: "host@acme.example",
      firstName: "Blake",
      lastName: "Rivera",
      displayName: "Blake Rivera",
    },
    attendee: { email: m.attendee, firstName: "A", lastName: "B" },
    additionalAttendees: m.additional ?? [],
    title: "Intro call",
    startTime: timestampFromDate(m.start),
    endTime: timestampFromDate(new Date(m.start.getTime() + (m.minutes ?? 30) * 60_000)),
    timeZone: "UTC",
    status: m.status ?? "scheduled",
    createTime: timestampFromDate(m.updated),
    updateTime: timestampFromDate(m.updated),
    smartScheduling: {
      scheduleId: "sched_x",
      rescheduleUrl: "https://x",
      cancelUrl: "https://x",
      preview: m.preview ?? false,
    },
  };
}

export function bookedEvent(meeting: ReturnType<typeof meetingOf>, id = newId("evt_")): EventEnvelope {
  return {
    id,
    type: EVENT_TYPES.meetingBooked,
    source: "scheduling",
    time: new Date().toISOString(),
    data: toJson(MeetingBookedSchema, create(MeetingBookedSchema, { meeting, sandbox: false })),
  };
}

export function canceledEvent(meeting: ReturnType<typeof meetingOf>, id = newId("evt_")): EventEnvelope {
  return {
    id,
    type: EVENT_TYPES.meetingCanceled,
    source: "scheduling",
    time: new Date().toISOString(),
    data: toJson(
      MeetingCanceledSchema,
      create(MeetingCanceledSchema, { meeting: { ...meeting, status: "canceled" }, sendNotifications: false }),
    ),
  };
}

export { TOPICS };
