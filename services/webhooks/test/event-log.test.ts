import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { EventLogService, WebhookSubscriptionService } from "@platform/contracts/webhooks";
import { ManualClock } from "@platform/kit/clock";
import type { Db } from "@platform/kit/db";
import { newId } from "@platform/kit/ids";
import { InProcessBus } from "@platform/kit/in-process-bus";
import { toBusMessage } from "@platform/kit/outbox";
import { problemOf } from "@platform/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { purgeEventLog } from "../src/application/event-log-retention.js";
import { startFanOut } from "../src/delivery/fan-out.js";
import { httpSender, systemResolver } from "../src/delivery/sender.js";
import { deliveryWorker } from "../src/delivery/worker.js";
import { EVENT_LOG_RETENTION_DAYS, publicEventId } from "../src/domain/event-log.js";
import { build } from "../src/server.js";
import {
  CURSOR_SECRET,
  callerOf,
  meeting,
  openTestDb,
  publishMeetingEvent,
  publishRevenueEvent,
  silentLogger,
  startReceiver,
} from "./builders.js";

// The event log: what the fan-out records of each consumed event (once, with the id, type, time
// and v2 body of its deliveries), and the three RPCs behind GET /events, GET /events/{id} and
// the gateway's live stream.
const BOOKED = "scheduling.smartscheduler.booked";
const CANCELED = "scheduling.smartscheduler.canceled";
const DEAL_CREATED = "revenue.deal.created";
const clock = new ManualClock("2026-01-15T12:00:00Z");
const DAY = 86_400_000;

let db: Db;
let bus: InProcessBus;
let closeDb: () => Promise<void>;
let api: ReturnType<typeof callerOf>;
let fanOut: { close(): Promise<void> };

beforeAll(async () => {
  const t = await openTestDb();
  db = t.db;
  closeDb = () => t.pglite.close();
  bus = new InProcessBus({ logger: silentLogger });
  const { routes } = build({ db, clock, cursorSecret: CURSOR_SECRET, allowPrivateTargets: true });
  api = callerOf(routes, clock);
  fanOut = await startFanOut({ db, bus, clock, logger: silentLogger });
});
afterAll(async () => {
  await fanOut.close();
  await bus.close();
  await closeDb();
});

const log = (orgId: string) => api(EventLogService, orgId);

/** Publishes a booking of a new meeting in `org` at the clock's time; its public id. */
async function book(org: string, opts: { preview?: boolean; sandbox?: boolean } = {}): Promise<string> {
  const m = meeting(org, { preview: opts.preview ?? false });
  const id = await publishMeetingEvent(bus, "booked", m, { at: clock.now(), sandbox: opts.sandbox ?? false });
  await bus.idle();
  return publicEventId(id);
}

describe("the event log", () => {
  it("records every catalog event of an org once, with the id and v2 body its deliveries carry, subscribed or not", async () => {
    const org = newId("org_");
    const unsubscribed = await book(org);
    const { events } = await log(org).listEvents({});
    expect(events.map((e) => e.id)).toEqual([unsubscribed]);
    expect(unsubscribed).toMatch(/^evt_[0-9a-z]{24}$/);

    // A subscribed event: the logged body is byte for byte the delivery's body.
    const receiver = await startReceiver();
    try {
      const sub = await api(WebhookSubscriptionService, org).createWebhookSubscription({
        endpointUrl: receiver.url,
        events: [BOOKED],
      });
      clock.advance(1000);
      const delivered = await book(org);
      const worker = deliveryWorker({
        db,
        clock,
        logger: silentLogger,
        sender: httpSender({ allowPrivateTargets: true, resolve: systemResolver, timeoutMs: 2000 }),
        leaseMs: 30_000,
        concurrency: 4,
        perEndpoint: 4,
        pollMs: 20,
      });
      expect(await worker.runOnce()).toBe(1);
      const [received] = receiver.received;
      expect(received?.headers["webhook-id"]).toBe(delivered);
      const { event } = await log(org).getEvent({ eventId: delivered });
      expect(event?.payloadJson).toBe(received?.body);
      expect(event?.type).toBe(BOOKED);
      expect(JSON.parse(event?.payloadJson ?? "{}")).toMatchObject({
        id: delivered,
        type: BOOKED,
        timestamp: clock.now().toISOString(),
        data: { meeting: { orgId: org } },
      });
      expect(sub.subscription?.id).toMatch(/^sub_/);
    } finally {
      await receiver.close();
    }
  });

  it("leaves out preview bookings and the sandbox's seeded events, as delivery does, and logs a redelivered message once", async () => {
    const org = newId("org_");
    await book(org, { preview: true });
    await book(org, { sandbox: true });
    const m = meeting(org);
    const busId = await publishMeetingEvent(bus, "booked", m, { at: clock.now() });
    await publishMeetingEvent(bus, "canceled", m, { at: clock.now() });
    await bus.idle();
    expect((await log(org).listEvents({})).events.map((e) => e.type).sort()).toEqual([BOOKED, CANCELED]);
    // The same booking again, as Kafka redelivers after a crash before the offset commit.
    await bus.publish("platform.scheduling.v1", [
      toBusMessage(
        {
          id: busId,
          type: BOOKED,
          source: "scheduling",
          time: clock.now().toISOString(),
          data: { meeting: { orgId: org } },
        },
        org,
      ),
    ]);
    await bus.idle();
    expect((await log(org).listEvents({})).events).toHaveLength(2);
  });

  it("pages newest first, filters by kind and time window, and binds cursors to the org", async () => {
    const org = newId("org_");
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      clock.advance(60_000);
      ids.push(await book(org));
    }
    clock.advance(60_000);
    const deal = publicEventId(await publishRevenueEvent(bus, DEAL_CREATED, org, { deal: { id: "deal_1" } }));
    await bus.idle();
    const all = [...ids, deal];

    const first = await log(org).listEvents({ limit: 4 });
    expect(first.events.map((e) => e.id)).toEqual(all.slice(-4).reverse());
    const second = await log(org).listEvents({ limit: 4, cursor: first.nextCursor });
    expect(second.events.map((e) => e.id)).toEqual(all.slice(0, 2).reverse());
    expect(second.nextCursor).toBe("");

    expect((await log(org).listEvents({ types: [DEAL_CREATED] })).events.map((e) => e.id)).toEqual([deal]);
    expect((await log(org).listEvents({ types: [BOOKED, CANCELED] })).events).toHaveLength(5);

    // Events 2 and 3 (1-based) by time: [after, before).
    const t = async (id: string) => (await log(org).getEvent({ eventId: id })).event?.time;
    const windowed = await log(org).listEvents({ createdAfter: await t(ids[1]!), createdBefore: await t(ids[3]!) });
    expect(windowed.events.map((e) => e.id)).toEqual([ids[2], ids[1]]);

    expect(await problemOf(log(org).listEvents({ types: ["scheduling.smartscheduler.nope"] }))).toBe("invalid-filter");
    expect(await problemOf(log(org).listEvents({ types: ["webhook.test"] }))).toBe("invalid-filter");
    const at = timestampFromDate(clock.now());
    expect(await problemOf(log(org).listEvents({ createdAfter: at, createdBefore: at }))).toBe("invalid-filter");
    // Another org's cursor, or a tampered one, does not page this org's log.
    expect(await problemOf(log(newId("org_")).listEvents({ limit: 4, cursor: first.nextCursor }))).toBe(
      "invalid-cursor",
    );
    expect(await problemOf(log(org).listEvents({ cursor: `${first.nextCursor}x` }))).toBe("invalid-cursor");
  });

  it("answers 404 event-not-found for unknown and other orgs' events, 400 for a malformed id", async () => {
    const org = newId("org_");
    const mine = await book(org);
    expect((await log(org).getEvent({ eventId: mine })).event?.id).toBe(mine);
    expect(await problemOf(log(newId("org_")).getEvent({ eventId: mine }))).toBe("event-not-found");
    expect(await problemOf(log(org).getEvent({ eventId: newId("evt_") }))).toBe("event-not-found");
    expect(await problemOf(log(org).getEvent({ eventId: "evt_nope" }))).toBe("invalid-resource-id");
    expect(await problemOf(log(org).getEvent({ eventId: newId("sub_") }))).toBe("invalid-resource-id");
  });

  it("polls from now, after an event id or a position, in the order recorded, without gaps or repeats", async () => {
    const org = newId("org_");
    const before = await book(org);
    const start = await log(org).pollEvents({});
    expect(start.events).toEqual([]);
    expect(start.caughtUp).toBe(true);

    const later = [await book(org), await book(org), await book(org)];
    const afterId = await log(org).pollEvents({ afterEventId: before });
    expect(afterId.events.map((e) => e.id)).toEqual(later);
    const fromPosition = await log(org).pollEvents({ afterPosition: start.position });
    expect(fromPosition.events.map((e) => e.id)).toEqual(later);
    expect(fromPosition.position).toBe(afterId.position);

    // Small pages: each ends where the next begins.
    const seen: string[] = [];
    let position = start.position;
    for (;;) {
      const page = await log(org).pollEvents({ afterPosition: position, limit: 2 });
      seen.push(...page.events.map((e) => e.id));
      position = page.position;
      if (page.caughtUp) break;
    }
    expect(seen).toEqual(later);

    // A filter skips kinds, and the position still moves past them.
    const deal = publicEventId(await publishRevenueEvent(bus, DEAL_CREATED, org, { deal: { id: "deal_2" } }));
    await bus.idle();
    const filtered = await log(org).pollEvents({ afterPosition: position, types: [BOOKED] });
    expect(filtered.events).toEqual([]);
    expect(filtered.position).toBeGreaterThan(position);
    const unfiltered = await log(org).pollEvents({ afterPosition: position });
    expect(unfiltered.events.map((e) => e.id)).toEqual([deal]);

    // Another org's event id, an unknown one and a malformed one are not positions in this log.
    const other = newId("org_");
    const theirs = await book(other);
    expect(await problemOf(log(org).pollEvents({ afterEventId: theirs }))).toBe("invalid-cursor");
    expect(await problemOf(log(org).pollEvents({ afterEventId: newId("evt_") }))).toBe("invalid-cursor");
    expect(await problemOf(log(org).pollEvents({ afterEventId: "garbage" }))).toBe("invalid-cursor");
    expect(await problemOf(log(org).pollEvents({ types: ["nope"] }))).toBe("invalid-filter");
    // Each org's log is its own: the other org's first event is its position 1.
    expect((await log(other).pollEvents({ afterPosition: 0n })).events.map((e) => e.id)).toEqual([theirs]);
  });

  it(`keeps events ${EVENT_LOG_RETENTION_DAYS} days`, async () => {
    const org = newId("org_");
    const old = await book(org);
    clock.advance(DAY);
    const recent = await book(org);
    clock.advance((EVENT_LOG_RETENTION_DAYS - 1) * DAY + 1000);
    expect(await purgeEventLog(db, clock)).toBeGreaterThanOrEqual(1);
    const { events } = await log(org).listEvents({});
    expect(events.map((e) => e.id)).toEqual([recent]);
    expect(await problemOf(log(org).getEvent({ eventId: old }))).toBe("event-not-found");
  });
});
