// Resend, recover, test events of a catalog kind, endpoint health and the disable event, through
// the webhooks API over PGlite with the fan-out, the outbox relay and a worker on the manual clock.
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { WEBHOOK_EVENT_CATALOG } from "@platform/contracts/webhooks";
import { newId } from "@platform/kit/ids";
import { startInProcessRelay } from "@platform/kit/in-process-relay";
import type { OutboxRelay } from "@platform/kit/outbox-relay";
import { problemOf } from "@platform/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpSender, systemResolver } from "../src/delivery/sender.js";
import { type DeliveryWorker, deliveryWorker } from "../src/delivery/worker.js";
import { publicEventId } from "../src/domain/event-log.js";
import { RETRY_SCHEDULE_MS } from "../src/domain/retry.js";
import { meeting, publishMeetingEvent, silentLogger, startReceiver, verifyWebhook } from "./builders.js";
import {
  bodyOf,
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

const DISABLED = "webhooks.subscription.disabled";
const MINUTE = 60 * SECOND;

let relay: OutboxRelay;
beforeAll(() => {
  // The disable event leaves through the outbox, as in every runtime.
  relay = startInProcessRelay({ db, bus, logger: silentLogger, clock, idleIntervalMs: 60_000 });
});
afterAll(() => relay.stop());

/** Publishes a booking now (on the test clock); its public event id. */
async function book(org: string): Promise<string> {
  return publicEventId(await publishMeetingEvent(bus, "booked", meeting(org), { at: clock.now() }));
}

/**
 * Runs the retry chains of what is pending to their end (8 attempts each): every step is longer
 * than the longest wait, so each chain moves one attempt a step, and shorter than the 12 h that
 * would break the failure run.
 */
async function exhaustRetries(): Promise<void> {
  for (let step = 0; step <= RETRY_SCHEDULE_MS.length; step++) {
    clock.advance(11 * HOUR);
    await pass();
  }
}

const since = (ms: number) => timestampFromDate(new Date(clock.now().getTime() - ms));

describe("recover", () => {
  it("sends every event the endpoint missed exactly once, in event order, and a second recover sends nothing", async () => {
    const org = newId("org_");
    const sub = await subscribe(org);
    const start = clock.now();
    const delivered = await book(org);
    await pass();
    // The receiver goes down: three events fail their whole retry chain.
    receiver.state.fallback = { status: 503 };
    const missed: string[] = [];
    for (let i = 0; i < 3; i++) {
      clock.advance(MINUTE);
      missed.push(await book(org));
      await pass();
    }
    const down = await client(org).getWebhookSubscription({ subscriptionId: sub.id });
    expect(down.subscription).toMatchObject({ status: "failing", enabled: true });
    expect(down.subscription?.lastSuccessTime && timestampDate(down.subscription.lastSuccessTime)).toEqual(start);
    await exhaustRetries();
    expect((await deliveries(org, sub.id)).filter((d) => d.status === "pending")).toEqual([]);

    // Back up: one recover queues one attempt of each missed event.
    receiver.state.fallback = { status: 200 };
    const before = receiver.received.length;
    const { recovery } = await client(org).recoverWebhookDeliveries({
      subscriptionId: sub.id,
      since: timestampFromDate(start),
    });
    expect(recovery).toMatchObject({ subscriptionId: sub.id, status: "running", queued: 3, delivered: 0, failed: 0 });
    expect(recovery?.id).toMatch(/^wrc_/);
    expect(recovery?.completeTime).toBeUndefined();
    // While it runs, another is refused.
    expect(
      await problemOf(
        client(org).recoverWebhookDeliveries({ subscriptionId: sub.id, since: timestampFromDate(start) }),
      ),
    ).toBe("webhook-recovery-in-progress");
    await pass();
    // Each once (queued in event order; up to the endpoint's cap are in flight at once, so they may arrive in any order).
    const resent = receiver.received.slice(before).map((r) => String(r.headers["webhook-id"]));
    expect(resent.sort()).toEqual([...missed].sort());
    expect(resent).not.toContain(delivered);
    const queued = (await deliveries(org, sub.id)).filter((d) => d.trigger === "redeliver");
    const byDue = [...queued].sort(
      (a, b) =>
        timestampDate(a.scheduledTime ?? timestampFromDate(start)).getTime() -
        timestampDate(b.scheduledTime ?? timestampFromDate(start)).getTime(),
    );
    expect(byDue.map((d) => d.eventId)).toEqual(missed);
    const done = await client(org).getWebhookRecovery({ subscriptionId: sub.id, recoveryId: recovery?.id ?? "" });
    expect(done.recovery).toMatchObject({ status: "completed", queued: 3, delivered: 3, failed: 0 });
    expect(done.recovery?.completeTime).toBeDefined();

    // Recovering again finds nothing missed: no event is delivered twice.
    const again = await client(org).recoverWebhookDeliveries({
      subscriptionId: sub.id,
      since: timestampFromDate(start),
    });
    expect(again.recovery).toMatchObject({ status: "completed", queued: 0 });
    await pass();
    expect(receiver.received.length).toBe(before + 3);

    // Health after: healthy again, the last failure remembered, a rate over the last 24 h.
    const healthy = (await client(org).getWebhookSubscription({ subscriptionId: sub.id })).subscription;
    expect(healthy?.status).toBe("healthy");
    expect(healthy?.lastSuccessTime && timestampDate(healthy.lastSuccessTime)).toEqual(clock.now());
    expect(healthy?.lastFailureTime).toBeDefined();
    // Inside the window (24 h): the last 3 retries (at +10 h, +20 h of the chain's end…) and the 3 successes.
    expect(healthy?.recentSuccessRate).toBeGreaterThan(0);
    expect(healthy?.recentSuccessRate).toBeLessThan(1);
    const listed = await client(org).listWebhookSubscriptions({});
    expect(listed.subscriptions[0]).toMatchObject({ id: sub.id, status: "healthy" });
  });

  it("takes over a retry that waits: a receiver back within the retry chain gets each missed event now, once", async () => {
    const org = newId("org_");
    const sub = await subscribe(org);
    const start = clock.now();
    receiver.state.fallback = { status: 503 };
    const missed = [await book(org), await book(org)];
    await pass();
    clock.advance(6 * SECOND);
    await pass();
    // Each has a retry waiting (due in 5 minutes).
    expect((await deliveries(org, sub.id)).filter((d) => d.status === "pending")).toHaveLength(2);
    receiver.state.fallback = { status: 200 };
    const before = receiver.received.length;
    const { recovery } = await client(org).recoverWebhookDeliveries({
      subscriptionId: sub.id,
      since: timestampFromDate(start),
    });
    expect(recovery).toMatchObject({ queued: 2, status: "running" });
    await pass();
    expect(
      receiver.received
        .slice(before)
        .map((r) => String(r.headers["webhook-id"]))
        .sort(),
    ).toEqual([...missed].sort());
    // The retries were the recovery's: nothing is sent again when they would have been due.
    clock.advance(HOUR);
    await pass();
    expect(receiver.received.length).toBe(before + 2);
    const after = await deliveries(org, sub.id);
    expect(after.filter((d) => d.status === "pending")).toEqual([]);
    expect(after.filter((d) => d.status === "succeeded").map((d) => d.trigger)).toEqual(["redeliver", "redeliver"]);
    const done = await client(org).getWebhookRecovery({ subscriptionId: sub.id, recoveryId: recovery?.id ?? "" });
    expect(done.recovery).toMatchObject({ status: "completed", delivered: 2, failed: 0 });
  });

  it("refuses a since more than 14 days back or in the future, and unknown or other orgs' ids", async () => {
    const org = newId("org_");
    const sub = await subscribe(org);
    expect(
      await problemOf(client(org).recoverWebhookDeliveries({ subscriptionId: sub.id, since: since(15 * 24 * HOUR) })),
    ).toBe("webhook-recovery-window-exceeded");
    expect(await problemOf(client(org).recoverWebhookDeliveries({ subscriptionId: sub.id, since: since(-HOUR) }))).toBe(
      "webhook-recovery-window-exceeded",
    );
    expect(await problemOf(client(org).recoverWebhookDeliveries({ subscriptionId: sub.id }))).toBe("invalid-field");
    const { recovery } = await client(org).recoverWebhookDeliveries({
      subscriptionId: sub.id,
      since: since(14 * 24 * HOUR),
    });
    expect(recovery).toMatchObject({ status: "completed", queued: 0 });
    const other = newId("org_");
    expect(
      await problemOf(client(other).recoverWebhookDeliveries({ subscriptionId: sub.id, since: since(HOUR) })),
    ).toBe("webhook-subscription-not-found");
    expect(
      await problemOf(client(other).getWebhookRecovery({ subscriptionId: sub.id, recoveryId: recovery?.id ?? "" })),
    ).toBe("webhook-subscription-not-found");
    const otherSub = await subscribe(other);
    expect(
      await problemOf(
        client(other).getWebhookRecovery({ subscriptionId: otherSub.id, recoveryId: recovery?.id ?? "" }),
      ),
    ).toBe("webhook-recovery-not-found");
    expect(await problemOf(client(org).getWebhookRecovery({ subscriptionId: sub.id, recoveryId: "nope" }))).toBe(
      "invalid-resource-id",
    );
  });
});

describe("resend", () => {
  it("sends the event of a failed delivery again, same webhook-id, and refuses unknown or other orgs' deliveries", async () => {
    const org = newId("org_");
    const sub = await subscribe(org);
    receiver.state.fallback = { status: 500 };
    const eventId = await book(org);
    await pass();
    const [failed] = await deliveries(org, sub.id);
    expect(failed).toMatchObject({ status: "failed", eventId });
    receiver.state.fallback = { status: 200 };
    const { delivery } = await client(org).resendWebhookDelivery({
      subscriptionId: sub.id,
      deliveryId: failed?.id ?? "",
    });
    expect(delivery).toMatchObject({ status: "pending", eventId, trigger: "redeliver", attempt: 3 });
    await pass();
    const last = receiver.received.at(-1);
    expect(last?.headers["webhook-id"]).toBe(eventId);
    verifyWebhook(sub.secret, last as NonNullable<typeof last>, clock.now());
    const all = await deliveries(org, sub.id);
    expect(all.find((d) => d.id === delivery?.id)?.status).toBe("succeeded");

    expect(
      await problemOf(client(org).resendWebhookDelivery({ subscriptionId: sub.id, deliveryId: newId("wd_") })),
    ).toBe("webhook-delivery-not-found");
    const other = newId("org_");
    const otherSub = await subscribe(other);
    expect(
      await problemOf(client(other).resendWebhookDelivery({ subscriptionId: sub.id, deliveryId: failed?.id ?? "" })),
    ).toBe("webhook-subscription-not-found");
    expect(
      await problemOf(
        client(other).resendWebhookDelivery({ subscriptionId: otherSub.id, deliveryId: failed?.id ?? "" }),
      ),
    ).toBe("webhook-delivery-not-found");
  });
});

describe("test events", () => {
  it("sends a marked example of every catalog kind to that subscription only; an unknown kind is refused", async () => {
    const org = newId("org_");
    const sub = await subscribe(org);
    const bystander = await subscribe(org, [...WEBHOOK_EVENT_CATALOG]);
    for (const kind of WEBHOOK_EVENT_CATALOG) {
      const before = receiver.received.length;
      const { delivery } = await client(org).testWebhookSubscription({ subscriptionId: sub.id, eventType: kind });
      expect(delivery).toMatchObject({ eventType: kind, trigger: "test", status: "pending" });
      await pass();
      expect(receiver.received.length).toBe(before + 1);
      const got = receiver.received.at(-1) as NonNullable<(typeof receiver.received)[number]>;
      expect(verifyWebhook(sub.secret, got, clock.now())).toBeTruthy();
      const body = bodyOf(got);
      expect(body).toMatchObject({ type: kind, test: true, id: delivery?.eventId });
      expect(body.data).toBeTypeOf("object");
    }
    // The ping is marked too; real events are not.
    await client(org).testWebhookSubscription({ subscriptionId: sub.id });
    await pass();
    expect(bodyOf(receiver.received.at(-1))).toMatchObject({ type: "webhook.test", test: true });
    await book(org);
    await pass();
    expect(bodyOf(receiver.received.at(-1)).test).toBeUndefined();
    expect((await deliveries(org, bystander.id)).every((d) => d.trigger !== "test")).toBe(true);
    expect(
      await problemOf(client(org).testWebhookSubscription({ subscriptionId: sub.id, eventType: "webhook.test" })),
    ).toBe("webhook-events-invalid");
    expect(await problemOf(client(org).testWebhookSubscription({ subscriptionId: sub.id, eventType: "nope" }))).toBe(
      "webhook-events-invalid",
    );
  });
});

describe("auto-disable", () => {
  let shortWorker: DeliveryWorker;
  beforeAll(() => {
    shortWorker = deliveryWorker({
      db,
      clock,
      logger: silentLogger,
      sender: httpSender({ allowPrivateTargets: true, resolve: systemResolver, timeoutMs: 2000 }),
      leaseMs: 30 * SECOND,
      concurrency: 16,
      perEndpoint: 4,
      pollMs: 20,
      random: () => 0.5,
      // WEBHOOK_DISABLE_AFTER_MS: an hour here, five days by default.
      disableAfterMs: HOUR,
    });
  });

  it("disables a subscription failing for the setting's time and delivers webhooks.subscription.disabled to the org's other subscriptions", async () => {
    const org = newId("org_");
    const failing = await subscribe(org);
    const other = await startReceiver();
    try {
      const watcher = await subscribe(org, [DISABLED], other.url);
      receiver.state.fallback = { status: 500 };
      const stranger = newId("org_");
      const strangers = await subscribe(stranger, [DISABLED], other.url);
      const runOnce = async () => {
        await bus.idle();
        await shortWorker.runOnce();
      };
      for (let i = 0; i < 8; i++) {
        await book(org);
        await runOnce();
        clock.advance(10 * MINUTE);
      }
      await runOnce();
      const disabled = (await client(org).getWebhookSubscription({ subscriptionId: failing.id })).subscription;
      expect(disabled).toMatchObject({ enabled: false, disabledReason: "failing", status: "disabled" });
      // Through the outbox to the fan-out, then to the watcher.
      await relay.drain();
      await runOnce();
      const got = other.received.filter((r) => bodyOf(r).type === DISABLED);
      expect(got).toHaveLength(1);
      expect(verifyWebhook(watcher.secret, got[0] as NonNullable<(typeof got)[number]>, clock.now())).toBeTruthy();
      expect(bodyOf(got[0]).data).toMatchObject({
        subscriptionId: failing.id,
        endpointUrl: receiver.url,
        reason: "failing",
        orgId: org,
      });
      expect(bodyOf(got[0]).test).toBeUndefined();
      // Recorded once in the org's event log; nothing reached another org.
      const logged = await db.query("SELECT type FROM webhooks.event_log WHERE org_id = $1 AND type = $2", [
        org,
        DISABLED,
      ]);
      expect(logged).toHaveLength(1);
      expect(await deliveries(stranger, strangers.id)).toEqual([]);

      // Re-enabled: delivery resumes from then on, healthy again once an attempt succeeds.
      receiver.state.fallback = { status: 200 };
      const enabled = await client(org).updateWebhookSubscription({ subscriptionId: failing.id, enabled: true });
      expect(enabled.subscription).toMatchObject({ enabled: true, status: "healthy" });
      const fresh = await book(org);
      await runOnce();
      expect(receiver.received.map((r) => r.headers["webhook-id"])).toContain(fresh);
    } finally {
      await other.close();
    }
  });
});
