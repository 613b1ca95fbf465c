import { eventually } from "@platform/kit/testing";
import { sandboxSubscriptionId } from "@platform/sandbox";
import { sandboxLegacySecret } from "@platform/webhooks/server";
import { describe, expect, it } from "vitest";
import { type Received, verifyWebhook } from "../support/webhook-receiver.js";
import {
  BOOKED,
  bodyOf,
  book,
  bookWithSpare,
  CANCELED,
  call,
  clock,
  createSubscription,
  documentedBody,
  otherOrgKey,
  platform,
  problemType,
  RESCHEDULED,
  receiver,
  SEED,
  useWebhooksPlatform,
} from "./setup.js";

// Deliveries through the embedded platform to a local receiver.

useWebhooksPlatform();

describe("delivery through the embedded platform", () => {
  it("a booking through the gateway reaches the endpoint, signed, with the Meeting the API returned", async () => {
    const sub = await createSubscription();
    const before = receiver.received.length;
    const meeting = await book();
    const r = await eventually("the booking's webhook", () =>
      receiver.received.slice(before).find((x) => JSON.parse(x.body).data?.meeting?.id === meeting.id),
    );
    const body = verifyWebhook(sub.secret, r as Received, clock.now()) as { type: string; data: { meeting: unknown } };
    expect(body.type).toBe(BOOKED);
    expect(body.data.meeting).toEqual(meeting);

    const deliveries = await eventually("the recorded attempt", async () => {
      const res = (await call("GET", `/webhook-subscriptions/${sub.id}/deliveries`)).json();
      return res.items[0]?.status === "succeeded" ? res : undefined;
    });
    expect(deliveries.items[0]).toMatchObject({
      subscriptionId: sub.id,
      eventId: r.headers["webhook-id"],
      eventType: BOOKED,
      attempt: 1,
      status: "succeeded",
      trigger: "event",
      responseStatus: 200,
      error: null,
      nextRetryAt: null,
    });

    const redelivered = await call(
      "POST",
      `/webhook-subscriptions/${sub.id}/deliveries/${deliveries.items[0].id}/redeliver`,
    );
    expect(redelivered.statusCode).toBe(202);
    expect(redelivered.json()).toMatchObject({ attempt: 2, trigger: "redeliver", status: "pending" });
    // The same real delivery, asked for by another org: as absent as an unknown subscription.
    const cross = await call(
      "POST",
      `/webhook-subscriptions/${sub.id}/deliveries/${deliveries.items[0].id}/redeliver`,
      { apiKey: otherOrgKey },
    );
    expect(cross.statusCode).toBe(404);
    expect(cross.json().type).toBe(problemType("webhook-subscription-not-found"));
    await eventually("the redelivery", () =>
      receiver.received.filter((x) => x.headers["webhook-id"] === r.headers["webhook-id"]).length === 2
        ? true
        : undefined,
    );
    await call("DELETE", `/webhook-subscriptions/${sub.id}`);
  });

  it("a reschedule through the gateway is delivered with its reason, as v2 and in the legacy shape, signed", async () => {
    const sub = await createSubscription({ events: [RESCHEDULED] });
    // The sandbox's legacy subscription, pointed at the receiver for this test.
    const legacyId = sandboxSubscriptionId(SEED, "acme-legacy");
    const legacyUrl = `${receiver.url}/legacy`;
    const legacyOn = await call("PATCH", `/webhook-subscriptions/${legacyId}`, {
      body: { endpointUrl: legacyUrl, enabled: true },
    });
    expect(legacyOn.json()).toMatchObject({ payloadVersion: "legacy", enabled: true });
    try {
      const { meeting, spare } = await bookWithSpare();
      clock.advance(1000);
      const moved = await call("PATCH", `/scheduled-meetings/${meeting.id}`, {
        body: { slotToken: spare.slotToken, reason: "Customer asked to move it" },
      });
      expect(moved.statusCode, moved.body).toBe(200);
      const rescheduled = moved.json();
      expect(rescheduled.startTime).toBe(spare.startTime);

      const v2 = await eventually("the v2 reschedule", () =>
        receiver.received.find((x) => {
          const b = bodyOf(x);
          return x.path === "/hooks" && b.type === RESCHEDULED && b.data?.meeting?.id === meeting.id;
        }),
      );
      expect(verifyWebhook(sub.secret, v2, clock.now())).toEqual({
        id: v2.headers["webhook-id"],
        type: RESCHEDULED,
        timestamp: expect.any(String),
        data: { meeting: rescheduled, reason: "Customer asked to move it" },
      });

      const legacy = await eventually("the legacy reschedule", () =>
        receiver.received.find((x) => {
          const b = bodyOf(x);
          return x.path === "/hooks/legacy" && b.event === RESCHEDULED && b.payload?.meeting?.id === meeting.id;
        }),
      );
      // The legacy subscription signs with its own (seeded) secret; the same event, the same webhook-id.
      expect(() => verifyWebhook(sub.secret, legacy, clock.now())).toThrow();
      expect(verifyWebhook(sandboxLegacySecret(SEED), legacy, clock.now())).toEqual({
        event: RESCHEDULED,
        event_id: v2.headers["webhook-id"],
        created_at: expect.any(String),
        payload: {
          meeting: {
            id: meeting.id,
            title: rescheduled.title,
            status: "scheduled",
            start: spare.startTime,
            end: spare.endTime,
            timezone: rescheduled.timeZone,
            host: {
              id: rescheduled.host.userId,
              email: rescheduled.host.email,
              name: rescheduled.host.displayName,
            },
            invitee: { email: "ada@example.com", name: "Ada Lovelace", phone: null, timezone: null },
            questions_and_answers: rescheduled.smartScheduling.formValues.map(
              (f: { key: string; answer: unknown }) => ({
                question: f.key,
                answer: f.answer,
              }),
            ),
            join_url: rescheduled.location?.joinUrl ?? null,
          },
          reason: "Customer asked to move it",
        },
      });
      expect(legacy.headers["webhook-id"]).toBe(v2.headers["webhook-id"]);

      // Both bodies are what the OpenAPI document's webhooks section describes.
      const documented = await documentedBody(RESCHEDULED);
      expect(documented(bodyOf(v2))).toBe("valid");
      expect(documented(bodyOf(legacy))).toBe("valid");
    } finally {
      await call("PATCH", `/webhook-subscriptions/${legacyId}`, {
        body: { endpointUrl: "https://hooks.example.com/platform/legacy", enabled: false },
      });
      await call("DELETE", `/webhook-subscriptions/${sub.id}`);
    }
  });

  it("a preview booking delivers nothing, nor does its reschedule or cancellation; the test ping does", async () => {
    const sub = await createSubscription({ events: [BOOKED, RESCHEDULED, CANCELED] });
    const before = receiver.received.length;
    const { meeting, spare } = await bookWithSpare(true);
    expect(meeting.smartScheduling.preview).toBe(true);
    clock.advance(1000);
    const moved = await call("PATCH", `/scheduled-meetings/${meeting.id}`, {
      body: { slotToken: spare.slotToken, reason: "Trying it out" },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json().smartScheduling.preview).toBe(true);
    const canceled = await call("DELETE", `/scheduled-meetings/${meeting.id}?reason=Done%20previewing`);
    expect(canceled.statusCode).toBe(204);
    const ping = await call("POST", `/webhook-subscriptions/${sub.id}/test`);
    expect(ping.statusCode).toBe(202);
    expect(ping.json()).toMatchObject({ eventType: "webhook.test", trigger: "test" });
    const r = await eventually("the ping", () =>
      receiver.received.slice(before).find((x) => x.headers["webhook-id"] === ping.json().eventId),
    );
    verifyWebhook(sub.secret, r, clock.now());
    await platform.drainOutbox();
    await platform.bus.idle();
    expect(receiver.received.slice(before).some((x) => bodyOf(x).data?.meeting?.id === meeting.id)).toBe(false);
    // Nothing was even queued: the only attempt of the subscription is the ping.
    const deliveries = (await call("GET", `/webhook-subscriptions/${sub.id}/deliveries`)).json();
    expect(deliveries.items.map((d: { eventType: string }) => d.eventType)).toEqual(["webhook.test"]);
    await call("DELETE", `/webhook-subscriptions/${sub.id}`);
  });
});
