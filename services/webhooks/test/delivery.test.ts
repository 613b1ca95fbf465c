import { meetingJson } from "@platform/contracts/rest/meeting";
import { newId } from "@platform/kit/ids";
import { describe, expect, it } from "vitest";
import { publicEventId } from "../src/domain/event-log.js";
import { newSecret } from "../src/domain/signature.js";
import { txStore } from "../src/store/index.js";
import { meeting, publishMeetingEvent, publishRevenueEvent, type Received, verifyWebhook } from "./builders.js";
import {
  BOOKED,
  bodyOf,
  bus,
  CANCELED,
  client,
  clock,
  db,
  deliveries,
  pass,
  receiver,
  subscribe,
  useDeliveryWorld,
} from "./delivery-fixture.js";

useDeliveryWorld();

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
