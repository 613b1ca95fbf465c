import { meetingJson } from "@platform/contracts/rest/meeting";
import { type WebhookDelivery, WebhookSubscriptionService } from "@platform/contracts/webhooks";
import { ManualClock } from "@platform/kit/clock";
import type { Db } from "@platform/kit/db";
import { newId } from "@platform/kit/ids";
import { InProcessBus } from "@platform/kit/in-process-bus";
import { eventually } from "@platform/kit/testing";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFanOut } from "../src/delivery/fan-out.js";
import { httpSender, systemResolver } from "../src/delivery/sender.js";
import { type DeliveryWorker, deliveryWorker } from "../src/delivery/worker.js";
import { publicEventId } from "../src/domain/event-log.js";
import { RETRY_SCHEDULE_MS } from "../src/domain/retry.js";
import { newSecret } from "../src/domain/signature.js";
import { build } from "../src/server.js";
import { txStore } from "../src/store/index.js";
import {
  CURSOR_SECRET,
  callerOf,
  fakeResolver,
  meeting,
  openTestDb,
  publishMeetingEvent,
  publishRevenueEvent,
  type Received,
  silentLogger,
  startReceiver,
  verifyWebhook,
} from "./builders.js";

const BOOKED = "scheduling.smartscheduler.booked";
const CANCELED = "scheduling.smartscheduler.canceled";
const clock = new ManualClock("2026-01-15T12:00:00Z");
const SECOND = 1000;
const HOUR = 3_600_000;

let db: Db;
let bus: InProcessBus;
let closeDb: () => Promise<void>;
let worker: DeliveryWorker;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let api: ReturnType<typeof callerOf>;
let fanOut: { close(): Promise<void> };

function makeWorker(timeoutMs = 2000): DeliveryWorker {
  return deliveryWorker({
    db,
    clock,
    logger: silentLogger,
    sender: httpSender({ allowPrivateTargets: true, resolve: systemResolver, timeoutMs }),
    leaseMs: 30 * SECOND,
    concurrency: 16,
    perEndpoint: 4,
    pollMs: 20,
    random: () => 0.5,
  });
}

beforeAll(async () => {
  const t = await openTestDb();
  db = t.db;
  closeDb = () => t.pglite.close();
  bus = new InProcessBus({ logger: silentLogger });
  // Unit tests enable private targets explicitly: the receiver is on 127.0.0.1, over http.
  const { routes } = build({ db, clock, cursorSecret: CURSOR_SECRET, allowPrivateTargets: true });
  api = callerOf(routes, clock);
  fanOut = await startFanOut({ db, bus, clock, logger: silentLogger });
  worker = makeWorker();
});
afterAll(async () => {
  await fanOut.close();
  await bus.close();
  await closeDb();
});
beforeEach(async () => {
  receiver = await startReceiver();
});
afterEach(() => receiver.close());

const client = (orgId: string) => api(WebhookSubscriptionService, orgId);

async function subscribe(orgId: string, events = [BOOKED, CANCELED], url = receiver.url) {
  const res = await client(orgId).createWebhookSubscription({ endpointUrl: url, events });
  return { id: res.subscription?.id ?? "", secret: res.secret };
}

/** Fans out what was published, then runs one worker pass; the number of attempts sent. */
async function pass(): Promise<number> {
  await bus.idle();
  return worker.runOnce();
}

async function deliveries(orgId: string, subscriptionId: string): Promise<WebhookDelivery[]> {
  const { deliveries } = await client(orgId).listWebhookDeliveries({ subscriptionId, sort: "createdAt", limit: 100 });
  // A retry is created the instant its predecessor fails, which the manual clock makes a tie.
  return deliveries.sort((a, b) => a.attempt - b.attempt);
}

const bodyOf = (r: Received | undefined) => JSON.parse(r?.body ?? "null");

describe("delivery", () => {
  it("POSTs a booking signed as Standard Webhooks, with the canonical Meeting, and records the attempt", async () => {
    const org = newId("org_");
    const sub = await subscribe(org);
    const m = meeting(org);
    const eventId = publicEventId(await publishMeetingEvent(bus, "booked", m, { at: clock.now() }));
    expect(await pass()).toBe(1);
    const [r] = receiver.received;
    expect(r?.headers["webhook-id"]).toBe(eventId);
    expect(r?.headers["content-type"]).toBe("application/json");
    expect(r?.headers["webhook-timestamp"]).toBe(String(clock.now().getTime() / 1000));
    const verified = verifyWebhook(sub.secret, r as Received, clock.now());
    expect(verified).toEqual({
      id: eventId,
      type: BOOKED,
      timestamp: clock.now().toISOString(),
      data: { meeting: meetingJson(m) },
    });
    expect(() => verifyWebhook(newSecret(), r as Received, clock.now())).toThrow();
    const [d] = await deliveries(org, sub.id);
    expect(d).toMatchObject({
      eventId,
      eventType: BOOKED,
      attempt: 1,
      status: "succeeded",
      trigger: "event",
      responseStatus: 200,
    });
    expect(d?.durationMs).toBeGreaterThanOrEqual(0);
    expect(d?.nextRetryTime).toBeUndefined();
  });

  it("fans out to every matching subscription of the event's org only, once even when the message comes again", async () => {
    const org = newId("org_");
    const a = await subscribe(org);
    const b = await subscribe(org, [BOOKED]);
    const onlyCancel = await subscribe(org, [CANCELED]);
    const other = await subscribe(newId("org_"));
    const m = meeting(org);
    const busId = await publishMeetingEvent(bus, "booked", m);
    // Deliveries carry the public evt_ id derived from the producer's.
    const eventId = publicEventId(busId);
    // The same message again, as Kafka redelivers after a crash before the offset commit.
    await bus.publish("platform.scheduling.v1", [
      {
        key: org,
        value: Buffer.from(JSON.stringify({ meeting: { orgId: org } })),
        headers: {
          ce_specversion: "1.0",
          ce_id: busId,
          ce_type: BOOKED,
          ce_source: "scheduling",
          ce_time: clock.now().toISOString(),
        },
      },
    ]);
    expect(await pass()).toBe(2);
    expect(await pass()).toBe(0);
    expect(receiver.received.map((r) => r.headers["webhook-id"])).toEqual([eventId, eventId]);
    for (const s of [a, b]) expect(await deliveries(org, s.id)).toHaveLength(1);
    expect(await deliveries(org, onlyCancel.id)).toHaveLength(0);
    expect(receiver.received.every((r) => bodyOf(r).data.meeting.orgId === org)).toBe(true);
    expect(other.id).toMatch(/^sub_/);
  });

  it("delivers nothing for preview bookings, the sandbox's events, or disabled subscriptions", async () => {
    const org = newId("org_");
    const sub = await subscribe(org);
    await publishMeetingEvent(bus, "booked", meeting(org, { preview: true }));
    await publishMeetingEvent(bus, "booked", meeting(org), { sandbox: true });
    await client(org).updateWebhookSubscription({ subscriptionId: sub.id, enabled: false });
    await publishMeetingEvent(bus, "booked", meeting(org));
    expect(await pass()).toBe(0);
    expect(receiver.received).toHaveLength(0);
    expect(await deliveries(org, sub.id)).toHaveLength(0);
  });

  it("delivers revenue events with their data as published", async () => {
    const org = newId("org_");
    const sub = await subscribe(org, ["revenue.deal.created"]);
    const eventId = publicEventId(
      await publishRevenueEvent(bus, "revenue.deal.created", org, { deal: { id: "deal_1" } }),
    );
    expect(await pass()).toBe(1);
    expect(verifyWebhook(sub.secret, receiver.received[0] as Received, clock.now())).toMatchObject({
      id: eventId,
      type: "revenue.deal.created",
      data: { orgId: org, deal: { id: "deal_1" } },
    });
  });

  it("keeps the legacy shape for a subscription that predates v2", async () => {
    const org = newId("org_");
    const secret = newSecret();
    const now = clock.now();
    await txStore(db).insertSubscription({
      id: newId("sub_"),
      orgId: org,
      endpointUrl: receiver.url,
      events: [CANCELED],
      description: null,
      enabled: true,
      payloadVersion: "legacy",
      secret,
      previousSecret: null,
      previousSecretExpiresAt: null,
      disabledReason: null,
      disabledAt: null,
      failingSince: null,
      lastFailureAt: null,
      createdAt: now,
      updatedAt: now,
    });
    const m = meeting(org);
    await publishMeetingEvent(bus, "canceled", m, { reason: "Double-booked" });
    expect(await pass()).toBe(1);
    const body = verifyWebhook(secret, receiver.received[0] as Received, clock.now());
    expect(body).toMatchObject({ event: CANCELED, payload: { meeting: { id: m.id }, reason: "Double-booked" } });
  });
});

describe("retries", () => {
  it("retries on the schedule, honours Retry-After, keeps the webhook-id, and stops at the first 2xx", async () => {
    const org = newId("org_");
    const sub = await subscribe(org);
    receiver.replies.push({ status: 500 }, { status: 503, headers: { "retry-after": "600" } }, { status: 200 });
    const eventId = publicEventId(await publishMeetingEvent(bus, "booked", meeting(org)));
    expect(await pass()).toBe(1);
    let [first] = await deliveries(org, sub.id);
    expect(first).toMatchObject({ attempt: 1, status: "failed", responseStatus: 500 });
    const due = Number(first?.nextRetryTime?.seconds) * 1000;
    expect(due).toBe(clock.now().getTime() + 5 * SECOND);

    clock.advance(4 * SECOND);
    expect(await pass()).toBe(0);
    clock.advance(1 * SECOND);
    expect(await pass()).toBe(1);
    const second = (await deliveries(org, sub.id))[1];
    expect(second).toMatchObject({ attempt: 2, trigger: "retry", status: "failed", responseStatus: 503 });
    // 600 s asked for beats the 5 min of the schedule.
    expect(Number(second?.nextRetryTime?.seconds) * 1000).toBe(clock.now().getTime() + 600 * SECOND);
    clock.advance(300 * SECOND);
    expect(await pass()).toBe(0);
    clock.advance(300 * SECOND);
    expect(await pass()).toBe(1);
    const all = await deliveries(org, sub.id);
    expect(all.map((d) => d.status)).toEqual(["failed", "failed", "succeeded"]);
    expect(receiver.received.map((r) => r.headers["webhook-id"])).toEqual([eventId, eventId, eventId]);
    for (const r of receiver.received)
      verifyWebhook(sub.secret, r, new Date(Number(r.headers["webhook-timestamp"]) * 1000));
    [first] = all;
    expect(first?.status).toBe("failed");
  });

  it("gives up after the seventh retry (8 attempts in about 28 h)", async () => {
    const org = newId("org_");
    const sub = await subscribe(org);
    for (let i = 0; i < 8; i++) receiver.replies.push({ status: 500 });
    await publishMeetingEvent(bus, "booked", meeting(org));
    for (let i = 0; i < 8; i++) {
      expect(await pass()).toBe(1);
      clock.advance(10 * HOUR + SECOND);
    }
    expect(await pass()).toBe(0);
    const all = await deliveries(org, sub.id);
    expect(all.map((d) => d.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(all.every((d) => d.status === "failed")).toBe(true);
    expect(all.at(-1)?.nextRetryTime).toBeUndefined();
    // Not yet five days of failures: the subscription stays enabled.
    expect((await client(org).getWebhookSubscription({ subscriptionId: sub.id })).subscription?.enabled).toBe(true);
  });

  it("a 410 disables the subscription at once; it then receives nothing", async () => {
    const org = newId("org_");
    const sub = await subscribe(org);
    receiver.replies.push({ status: 410 });
    await publishMeetingEvent(bus, "booked", meeting(org));
    expect(await pass()).toBe(1);
    const got = (await client(org).getWebhookSubscription({ subscriptionId: sub.id })).subscription;
    expect(got).toMatchObject({ enabled: false, disabledReason: "endpoint-gone" });
    const [d] = await deliveries(org, sub.id);
    expect(d).toMatchObject({ status: "failed", responseStatus: 410 });
    expect(d?.nextRetryTime).toBeUndefined();
    await publishMeetingEvent(bus, "booked", meeting(org));
    expect(await pass()).toBe(0);
    expect(receiver.received).toHaveLength(1);
  });

  it("one event failing its whole chain, then quiet days, does not disable: the run was not continuous", async () => {
    const org = newId("org_");
    const sub = await subscribe(org);
    receiver.state.fallback = { status: 503 };
    await publishMeetingEvent(bus, "booked", meeting(org));
    // The eight attempts, each when due (about 28 h), all failing.
    for (const wait of [...RETRY_SCHEDULE_MS, 0]) {
      expect(await pass()).toBe(1);
      clock.advance(wait);
    }
    expect((await deliveries(org, sub.id)).map((d) => d.status)).toEqual(Array(8).fill("failed"));
    // Five quiet days, then a new event's first attempt fails.
    clock.advance(5 * 24 * HOUR);
    await publishMeetingEvent(bus, "booked", meeting(org));
    expect(await pass()).toBe(1);
    const got = (await client(org).getWebhookSubscription({ subscriptionId: sub.id })).subscription;
    expect(got).toMatchObject({ enabled: true });
    const latest = await attemptsAt(sub.id, clock.now());
    expect(latest).toHaveLength(1);
    expect(latest[0]?.next_retry_at).not.toBeNull();
    // The new run starts at this failure.
    const found = await txStore(db).findSubscription(org, sub.id);
    expect(found).toMatchObject({ failingSince: clock.now(), lastFailureAt: clock.now() });
  });

  it("a subscription failing continuously for five days is disabled, and retries nothing more; a success resets the run", async () => {
    const org = newId("org_");
    const sub = await subscribe(org);
    const enabled = async () => (await client(org).getWebhookSubscription({ subscriptionId: sub.id })).subscription;
    const STEP = 6 * HOUR;
    /** A new event every 6 h (well inside the longest wait of a retry chain), sent with the retries due. */
    const everyStep = async (ms: number) => {
      for (let t = 0; t < ms; t += STEP) {
        clock.advance(Math.min(STEP, ms - t));
        await publishMeetingEvent(bus, "booked", meeting(org));
        await pass();
      }
    };
    receiver.state.fallback = { status: 500 };
    await publishMeetingEvent(bus, "booked", meeting(org));
    await pass();
    await everyStep(4 * 24 * HOUR);
    expect((await enabled())?.enabled).toBe(true);
    // One pass of successes ends the run.
    receiver.state.fallback = { status: 200 };
    await everyStep(STEP);
    receiver.state.fallback = { status: 500 };
    await everyStep(STEP);
    const runStart = clock.now();
    expect(await txStore(db).findSubscription(org, sub.id)).toMatchObject({ failingSince: runStart });
    await everyStep(5 * 24 * HOUR - 1);
    expect((await enabled())?.enabled).toBe(true);
    await everyStep(1);
    expect(clock.now().getTime() - runStart.getTime()).toBe(5 * 24 * HOUR);
    expect(await enabled()).toMatchObject({ enabled: false, disabledReason: "failing" });
    // The attempts that found it disabled schedule no retry.
    const last = await attemptsAt(sub.id, clock.now());
    expect(last.length).toBeGreaterThan(0);
    expect(last.every((a) => a.status === "failed" && a.next_retry_at === null)).toBe(true);
  });
});

/** The attempts of a subscription sent at `at`, straight from the table. */
async function attemptsAt(subscriptionId: string, at: Date) {
  return db.query<{ status: string; next_retry_at: Date | null }>(
    "SELECT status, next_retry_at FROM webhooks.attempts WHERE subscription_id = $1 AND attempted_at = $2",
    [subscriptionId, at],
  );
}

describe("secrets, tests and redelivery", () => {
  it("during 24 h after a rotation both secrets verify; afterwards only the new one", async () => {
    const org = newId("org_");
    const sub = await subscribe(org);
    const rotated = await client(org).rotateWebhookSecret({ subscriptionId: sub.id });
    await publishMeetingEvent(bus, "booked", meeting(org));
    await pass();
    const during = receiver.received[0] as Received;
    expect(String(during.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    verifyWebhook(sub.secret, during, clock.now());
    verifyWebhook(rotated.secret, during, clock.now());

    clock.advance(24 * HOUR);
    await publishMeetingEvent(bus, "booked", meeting(org));
    await pass();
    const after = receiver.received[1] as Received;
    expect(String(after.headers["webhook-signature"]).split(" ")).toHaveLength(1);
    verifyWebhook(rotated.secret, after, clock.now());
    expect(() => verifyWebhook(sub.secret, after, clock.now())).toThrow();
  });

  it("the test endpoint sends a signed webhook.test ping, once", async () => {
    const org = newId("org_");
    const sub = await subscribe(org);
    receiver.replies.push({ status: 500 });
    const { delivery } = await client(org).testWebhookSubscription({ subscriptionId: sub.id });
    expect(delivery).toMatchObject({ eventType: "webhook.test", status: "pending", trigger: "test", attempt: 1 });
    expect(await worker.runOnce()).toBe(1);
    expect(verifyWebhook(sub.secret, receiver.received[0] as Received, clock.now())).toMatchObject({
      type: "webhook.test",
      data: { subscriptionId: sub.id },
    });
    clock.advance(HOUR);
    expect(await worker.runOnce()).toBe(0);
    const [d] = await deliveries(org, sub.id);
    expect(d).toMatchObject({ status: "failed", responseStatus: 500 });
    expect(d?.nextRetryTime).toBeUndefined();
  });

  it("redeliver sends the same event again now, as the next attempt, even to a disabled subscription", async () => {
    const org = newId("org_");
    const sub = await subscribe(org);
    const eventId = publicEventId(await publishMeetingEvent(bus, "booked", meeting(org)));
    await pass();
    const [original] = await deliveries(org, sub.id);
    await client(org).updateWebhookSubscription({ subscriptionId: sub.id, enabled: false });
    const { delivery } = await client(org).redeliverWebhook({ subscriptionId: sub.id, deliveryId: original?.id ?? "" });
    expect(delivery).toMatchObject({ eventId, attempt: 2, trigger: "redeliver", status: "pending" });
    expect(await worker.runOnce()).toBe(1);
    expect(receiver.received.map((r) => r.headers["webhook-id"])).toEqual([eventId, eventId]);
    expect(receiver.received[1]?.body).toBe(receiver.received[0]?.body);
    const unknown = client(org).redeliverWebhook({ subscriptionId: sub.id, deliveryId: newId("wd_") });
    await expect(unknown).rejects.toThrow(/not found/);
  });
});

describe("isolation and safety", () => {
  it("a slow endpoint does not hold up others; it fails at the timeout", async () => {
    const slow = await startReceiver();
    try {
      const org = newId("org_");
      const slowSub = await subscribe(org, [BOOKED], slow.url);
      const sub = await subscribe(org, [BOOKED]);
      slow.replies.push({ status: 200, delayMs: 5000 }, { status: 200, delayMs: 5000 });
      const loopWorker = makeWorker(3000);
      const loop = loopWorker.start();
      try {
        await publishMeetingEvent(bus, "booked", meeting(org));
        await eventually("the fast endpoint's delivery", async () => {
          const ds = await deliveries(org, sub.id);
          return ds[0]?.status === "succeeded" ? true : undefined;
        });
        // Done while the slow endpoint still holds its attempt.
        expect((await deliveries(org, slowSub.id))[0]?.status).toBe("pending");
        const [d] = await eventually("the slow endpoint's failure", async () => {
          const ds = await deliveries(org, slowSub.id);
          return ds[0]?.status === "failed" ? ds : undefined;
        });
        expect(d?.error).toMatch(/no response within 3000 ms/);
      } finally {
        await loop.close();
      }
    } finally {
      await slow.close();
    }
  });

  it("subscriptions sharing a hanging endpoint hold only its cap of the worker; another endpoint's delivery goes through", async () => {
    const dead = await startReceiver();
    let release: () => void = () => {};
    dead.state.fallback = { status: 200, until: new Promise<void>((r) => (release = r)) };
    const loopWorker = deliveryWorker({
      db,
      clock,
      logger: silentLogger,
      // No timeout gets in the way: the endpoint hangs until the test releases it.
      sender: httpSender({ allowPrivateTargets: true, resolve: systemResolver, timeoutMs: 60_000 }),
      leaseMs: 120 * SECOND,
      concurrency: 4,
      perEndpoint: 2,
      pollMs: 20,
    });
    const loop = loopWorker.start();
    try {
      const org = newId("org_");
      // Six subscriptions of one org, one endpoint (paths differ, the origin is the same).
      const hanging = [];
      for (let i = 0; i < 6; i++) hanging.push(await subscribe(org, [BOOKED], `${dead.url}/${i}`));
      const live = await subscribe(org, [CANCELED]);
      await publishMeetingEvent(bus, "booked", meeting(org));
      await eventually("the hanging endpoint's share", () => (dead.received.length >= 2 ? true : undefined));
      // Queued after the six, so claimed in order it would wait behind them without the endpoint cap.
      clock.advance(SECOND);
      await publishMeetingEvent(bus, "canceled", meeting(org));
      await eventually("the live endpoint's delivery", async () =>
        (await deliveries(org, live.id))[0]?.status === "succeeded" ? true : undefined,
      );
      // Meanwhile the hanging endpoint still holds exactly its cap, nothing of it completed.
      expect(dead.received).toHaveLength(2);
      const states = await Promise.all(hanging.map(async (h) => (await deliveries(org, h.id))[0]?.status));
      expect(states.every((s) => s === "pending")).toBe(true);
    } finally {
      release();
      await loop.close();
      await dead.close();
    }
  });

  it("checks the resolved address at connect time, and never follows redirects", async () => {
    const port = new URL(receiver.url).port;
    const strict = httpSender({
      allowPrivateTargets: false,
      resolve: fakeResolver({ "rebound.example.com": ["127.0.0.1"] }),
      timeoutMs: 1000,
    });
    const req = { headers: {}, body: "{}" };
    const rebound = await strict({ ...req, url: `https://rebound.example.com:${port}/hooks` });
    expect(rebound).toMatchObject({ status: undefined, error: expect.stringMatching(/refused target/) });
    const literal = await strict({ ...req, url: `https://127.0.0.1:${port}/hooks` });
    expect(literal.error).toMatch(/refused target/);
    // IPv4-compatible IPv6 (::/96) is refused outright, as a literal and as a DNS answer.
    const compatible = await strict({ ...req, url: `https://[::127.0.0.1]:${port}/hooks` });
    expect(compatible.error).toMatch(/refused target/);
    const compatibleName = httpSender({
      allowPrivateTargets: false,
      resolve: fakeResolver({ "compat.example.com": ["::808:808"] }),
      timeoutMs: 1000,
    });
    expect((await compatibleName({ ...req, url: `https://compat.example.com:${port}/hooks` })).error).toMatch(
      /refused target/,
    );
    const plain = await strict({ ...req, url: `http://93.184.216.34:${port}/hooks` });
    expect(plain.error).toMatch(/HTTPS/);
    expect(receiver.received).toHaveLength(0);

    receiver.replies.push({ status: 302, headers: { location: `${receiver.url}/elsewhere` } });
    const lax = httpSender({ allowPrivateTargets: true, resolve: systemResolver, timeoutMs: 1000 });
    expect(await lax({ ...req, url: receiver.url })).toMatchObject({ status: 302 });
    expect(receiver.received).toHaveLength(1);
  });
});
