import { newId } from "@platform/kit/ids";
import { describe, expect, it } from "vitest";
import { publicEventId } from "../src/domain/event-log.js";
import { RETRY_SCHEDULE_MS } from "../src/domain/retry.js";
import { txStore } from "../src/store/index.js";
import { meeting, publishMeetingEvent, verifyWebhook } from "./builders.js";
import {
  bus,
  client,
  clock,
  db,
  deliveries,
  HOUR,
  pass,
  receiver,
  SECOND,
  subscribe,
  useDeliveryWorld,
} from "./delivery-fixture.js";

useDeliveryWorld();

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
