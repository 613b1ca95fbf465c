import { newId } from "@platform/kit/ids";
import { describe, expect, it } from "vitest";
import { publicEventId } from "../src/domain/event-log.js";
import { meeting, publishMeetingEvent, type Received, verifyWebhook } from "./builders.js";
import {
  bus,
  client,
  clock,
  deliveries,
  HOUR,
  pass,
  receiver,
  subscribe,
  useDeliveryWorld,
  worker,
} from "./delivery-fixture.js";

useDeliveryWorld();

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
