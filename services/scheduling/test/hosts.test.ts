import { create, toJson } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { UserInvitedSchema, UserUpdatedSchema } from "@platform/contracts/events/identity";
import { SmartScheduleService } from "@platform/contracts/scheduling";
import type { Subscription } from "@platform/kit/bus";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import { newId } from "@platform/kit/ids";
import { InProcessBus } from "@platform/kit/in-process-bus";
import { toBusMessage } from "@platform/kit/outbox";
import { eventually } from "@platform/kit/testing";
import { DateTime } from "luxon";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { logNotifier } from "../src/application/notifier.js";
import { startSchedulingConsumers } from "../src/events/subscriptions.js";
import { hostStore } from "../src/store/host.store.js";
import {
  createTestScheduling,
  formValues,
  givenHost,
  givenSchedule,
  silentLogger,
  type TestScheduling,
} from "./builders.js";

// Hosts follow identity: identity's user events (payloads from the contracts, as identity
// publishes them) feed scheduling's hosts projection.

let t: TestScheduling;
let bus: InProcessBus;
let subscriptions: Subscription[];
const acme = newId("org_");

beforeAll(async () => {
  t = await createTestScheduling();
});
afterAll(() => t.close());
beforeEach(async () => {
  await t.reset();
  bus = new InProcessBus();
  subscriptions = await startSchedulingConsumers({
    db: t.db,
    bus,
    logger: silentLogger,
    notifier: logNotifier(silentLogger),
  });
});
afterEach(async () => {
  for (const s of subscriptions) await s.close();
  await bus.close();
});

interface Profile {
  userId: string;
  email: string;
  firstName?: string;
  lastName?: string;
  displayName?: string;
  timeZone?: string;
}

async function publish(type: string, data: unknown, subject: string, id = newId("evt_")): Promise<string> {
  const envelope = { id, type, source: "identity", subject, time: new Date().toISOString(), data };
  await bus.publish(TOPICS.identity, [toBusMessage(envelope, acme)]);
  return id;
}

const invited = (p: Profile) =>
  publish(
    EVENT_TYPES.userInvited,
    toJson(UserInvitedSchema, create(UserInvitedSchema, { ...p, orgId: acme, role: "User", version: 1n })),
    p.userId,
  );

const updated = (p: Profile, version: bigint, id?: string) =>
  publish(
    EVENT_TYPES.userUpdated,
    toJson(
      UserUpdatedSchema,
      create(UserUpdatedSchema, { ...p, orgId: acme, version, changedFields: ["firstName"], active: true }),
    ),
    p.userId,
    id,
  );

const hostOf = (userId: string, version = 1) =>
  eventually(`host ${userId} at version ${version}`, async () => {
    const h = await hostStore(t.db).findHost(userId);
    return h && h.identityVersion >= version ? h : undefined;
  });

describe("hosts projection from identity's user events", () => {
  it("makes an invited user a host in UTC, Monday to Friday 09:00 to 17:00, usable by a schedule", async () => {
    const userId = newId("usr_");
    await invited({
      userId,
      email: "new.person@acme.example",
      firstName: "New",
      lastName: "Person",
      displayName: "New Person",
    });
    const host = await hostOf(userId);
    expect(host).toMatchObject({
      userId,
      orgId: acme,
      email: "new.person@acme.example",
      firstName: "New",
      lastName: "Person",
      displayName: "New Person",
      timeZone: "UTC",
      workingHours: [1, 2, 3, 4, 5].map((weekday) => ({ weekday, start: "09:00", end: "17:00" })),
    });

    // Availability offers the new host's default hours only.
    const schedule = await givenSchedule(t.db, acme, [host]);
    const res = await t
      .caller(SmartScheduleService, acme)
      .getAvailability({ scheduleId: schedule.id, formValues: formValues({ region: "AMER" }) });
    const slots = res.hostGroups.flatMap((g) => g.hosts).flatMap((h) => h.slots);
    expect(res.hostGroups[0]?.hosts[0]?.host?.displayName).toBe("New Person");
    expect(slots.length).toBeGreaterThan(0);
    for (const s of slots) {
      if (!s.startTime) throw new Error("a slot without a start");
      const start = DateTime.fromJSDate(timestampDate(s.startTime), { zone: "UTC" });
      expect(start.weekday).toBeLessThanOrEqual(5);
      expect(start.hour).toBeGreaterThanOrEqual(9);
      expect(start.hour).toBeLessThan(17);
    }
  });

  it("takes identity's time zone when its event names one the slot engine knows", async () => {
    const berlin = newId("usr_");
    const bogus = newId("usr_");
    await invited({ userId: berlin, email: "b@acme.example", displayName: "B", timeZone: "Europe/Berlin" });
    await invited({ userId: bogus, email: "c@acme.example", displayName: "C", timeZone: "Mars/Olympus" });
    expect((await hostOf(berlin)).timeZone).toBe("Europe/Berlin");
    expect((await hostOf(bogus)).timeZone).toBe("UTC");
  });

  it("follows identity's renames but keeps scheduling's zone and hours; a stale version changes nothing", async () => {
    const sandboxHost = await givenHost(t.db, acme, { timeZone: "Asia/Kolkata", firstName: "Old", lastName: "Name" });
    await updated(
      { userId: sandboxHost.userId, email: sandboxHost.email, firstName: "Renamed", displayName: "Renamed" },
      3n,
    );
    const renamed = await hostOf(sandboxHost.userId, 3);
    expect(renamed).toMatchObject({
      firstName: "Renamed",
      lastName: "",
      displayName: "Renamed",
      timeZone: "Asia/Kolkata",
      workingHours: sandboxHost.workingHours,
    });

    // An older version arriving late (another event id) is ignored.
    await updated(
      { userId: sandboxHost.userId, email: sandboxHost.email, firstName: "Stale", displayName: "Stale" },
      2n,
    );
    const marker = newId("usr_");
    await invited({ userId: marker, email: "m@acme.example", displayName: "M" });
    await hostOf(marker);
    expect(await hostStore(t.db).findHost(sandboxHost.userId)).toMatchObject({
      displayName: "Renamed",
      identityVersion: 3,
    });
  });

  it("starts a host from an update when it never saw the invitation, once per event id", async () => {
    const userId = newId("usr_");
    const id = await updated({ userId, email: "late@acme.example", firstName: "Late", displayName: "Late" }, 2n);
    expect(await hostOf(userId, 2)).toMatchObject({ displayName: "Late", timeZone: "UTC" });
    await updated({ userId, email: "late@acme.example", firstName: "Again", displayName: "Again" }, 5n, id);
    const marker = newId("usr_");
    await invited({ userId: marker, email: "m2@acme.example", displayName: "M" });
    await hostOf(marker);
    expect(await hostStore(t.db).findHost(userId)).toMatchObject({ displayName: "Late", identityVersion: 2 });
  });

  it("ignores an event without the profile (published before identity carried it)", async () => {
    const userId = newId("usr_");
    await invited({ userId, email: "" });
    const marker = newId("usr_");
    await invited({ userId: marker, email: "m3@acme.example", displayName: "M" });
    await hostOf(marker);
    expect(await hostStore(t.db).findHost(userId)).toBeUndefined();
  });
});
