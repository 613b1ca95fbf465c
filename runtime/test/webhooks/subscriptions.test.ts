import { newId } from "@platform/kit/ids";
import { sandboxSubscriptionId } from "@platform/sandbox";
import { describe, expect, it } from "vitest";
import {
  BOOKED,
  CANCELED,
  call,
  clock,
  createSubscription,
  key,
  otherOrgKey,
  problemType,
  readonlyKey,
  receiver,
  SEED,
  useWebhooksPlatform,
} from "./setup.js";

// Webhook subscriptions through the gateway (setup.ts starts the platform).

useWebhooksPlatform();

describe("webhook subscriptions through the gateway", () => {
  it("creates (201, the secret once), reads, lists and deletes a subscription", async () => {
    const created = await createSubscription({ description: "CRM" });
    expect(created).toMatchObject({
      endpointUrl: receiver.url,
      events: [BOOKED, CANCELED],
      description: "CRM",
      enabled: true,
      payloadVersion: "v2",
      disabledReason: null,
      disabledAt: null,
      previousSecretExpiresAt: null,
      createdAt: clock.now().toISOString(),
    });
    expect(created.secret).toMatch(/^whsec_/);
    const got = await call("GET", `/webhook-subscriptions/${created.id}`);
    expect(got.statusCode).toBe(200);
    const { secret: _secret, ...withoutSecret } = created;
    expect(got.json()).toEqual(withoutSecret);
    const list = (await call("GET", "/webhook-subscriptions?limit=100")).json();
    expect(list.items.map((s: { id: string }) => s.id)).toContain(created.id);
    expect(list.nextCursor).toBeNull();
    const deleted = await call("DELETE", `/webhook-subscriptions/${created.id}`);
    expect(deleted.statusCode).toBe(204);
    const again = await call("GET", `/webhook-subscriptions/${created.id}`);
    expect(again.statusCode).toBe(404);
    expect(again.json().type).toBe(problemType("webhook-subscription-not-found"));
  });

  it("shows the sandbox's legacy subscription, which keeps its payload version", async () => {
    const legacyId = sandboxSubscriptionId(SEED, "acme-legacy");
    const got = await call("GET", `/webhook-subscriptions/${legacyId}`);
    expect(got.json()).toMatchObject({ id: legacyId, payloadVersion: "legacy", enabled: false });
    const patched = await call("PATCH", `/webhook-subscriptions/${legacyId}`, { body: { payloadVersion: "v2" } });
    expect(patched.statusCode).toBe(400);
    expect(patched.json().type).toBe(problemType("invalid-field"));
  });

  it("answers the spec's problems as problem+json", async () => {
    const bad = await call("POST", "/webhook-subscriptions", {
      body: { endpointUrl: "ftp://x.example/", events: [BOOKED] },
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.headers["content-type"]).toMatch(/application\/problem\+json/);
    expect(bad.json()).toMatchObject({ type: problemType("webhook-endpoint-invalid"), status: 422 });
    const events = await call("POST", "/webhook-subscriptions", { body: { endpointUrl: receiver.url, events: [] } });
    expect(events.json().type).toBe(problemType("webhook-events-invalid"));
    // An unknown kind passes the gateway's body schema and is the service's 422, on create and on PATCH.
    const unknownKind = await call("POST", "/webhook-subscriptions", {
      body: { endpointUrl: receiver.url, events: [BOOKED, "scheduling.smartscheduler.nope"] },
    });
    expect(unknownKind.statusCode).toBe(422);
    expect(unknownKind.json()).toMatchObject({ type: problemType("webhook-events-invalid"), field: "events" });
    const unknown = await call("GET", "/webhook-subscriptions/sub_0000000000000000000000aa");
    expect(unknown.json().type).toBe(problemType("webhook-subscription-not-found"));
    const malformed = await call("GET", "/webhook-subscriptions/nope");
    expect(malformed.json().type).toBe(problemType("invalid-resource-id"));
    const noKey = await call("POST", "/webhook-subscriptions", {
      body: { endpointUrl: receiver.url, events: [BOOKED] },
      headers: { "idempotency-key": "" },
    });
    expect(noKey.json().type).toBe(problemType("idempotency-key-required"));
    const readOnly = await call("POST", "/webhook-subscriptions", {
      apiKey: readonlyKey,
      body: { endpointUrl: receiver.url, events: [BOOKED] },
    });
    expect(readOnly.statusCode).toBe(403);
    expect(readOnly.json()).toMatchObject({ type: problemType("insufficient-scope"), requiredScope: "webhooks:write" });
    const mine = await createSubscription();
    const cross = await call("GET", `/webhook-subscriptions/${mine.id}`, { apiKey: otherOrgKey });
    expect(cross.statusCode).toBe(404);
    expect(cross.json().type).toBe(problemType("webhook-subscription-not-found"));
    const patchUnknownKind = await call("PATCH", `/webhook-subscriptions/${mine.id}`, {
      body: { events: ["revenue.deal.deleted"] },
    });
    expect(patchUnknownKind.statusCode).toBe(422);
    expect(patchUnknownKind.json().type).toBe(problemType("webhook-events-invalid"));
    // Redeliver: a malformed delivery id is the gateway's 400; an unknown one is 404 (the spec has
    // no delivery-specific problem); another org's subscription is as absent as an unknown one.
    const redeliver = (deliveryId: string, apiKey = key) =>
      call("POST", `/webhook-subscriptions/${mine.id}/deliveries/${deliveryId}/redeliver`, { apiKey });
    const malformedDelivery = await redeliver("wd_nope");
    expect(malformedDelivery.statusCode).toBe(400);
    expect(malformedDelivery.json()).toMatchObject({
      type: problemType("invalid-resource-id"),
      parameter: "deliveryId",
    });
    const otherPrefix = await redeliver(newId("sub_"));
    expect(otherPrefix.json().type).toBe(problemType("invalid-resource-id"));
    const unknownDelivery = await redeliver(newId("wd_"));
    expect(unknownDelivery.statusCode).toBe(404);
    expect(unknownDelivery.json().type).toBe(problemType("webhook-subscription-not-found"));
    const crossRedeliver = await redeliver(newId("wd_"), otherOrgKey);
    expect(crossRedeliver.statusCode).toBe(404);
    expect(crossRedeliver.json().type).toBe(problemType("webhook-subscription-not-found"));
    await call("DELETE", `/webhook-subscriptions/${mine.id}`);
  });

  it("the 11th subscription of an org is 422 webhook-limit-reached", async () => {
    const existing = (await call("GET", "/webhook-subscriptions?limit=100", { apiKey: otherOrgKey })).json().items
      .length;
    const made: string[] = [];
    for (let i = existing; i < 10; i++) {
      clock.advance(3_001);
      made.push((await createSubscription({}, otherOrgKey)).id);
    }
    clock.advance(3_001);
    const eleventh = await call("POST", "/webhook-subscriptions", {
      apiKey: otherOrgKey,
      body: { endpointUrl: receiver.url, events: [BOOKED] },
    });
    expect(eleventh.statusCode).toBe(422);
    expect(eleventh.json().type).toBe(problemType("webhook-limit-reached"));
    for (const id of made) await call("DELETE", `/webhook-subscriptions/${id}`, { apiKey: otherOrgKey });
  });
});
