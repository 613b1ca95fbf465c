import { gatewayConfigSpec } from "@platform/gateway/config";
import { ManualClock } from "@platform/kit/clock";
import { loadConfig } from "@platform/kit/config";
import { newId } from "@platform/kit/ids";
import { createLogger } from "@platform/kit/logger";
import { eventually } from "@platform/kit/testing";
import { sandboxSubscriptionId } from "@platform/sandbox";
import { sandboxLegacySecret } from "@platform/webhooks/server";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createEmbeddedPlatform, type EmbeddedPlatform } from "../src/platform.js";
import { type Received, startReceiver, verifyWebhook } from "./webhook-receiver.js";

// Webhooks end to end on the embedded platform: gateway → webhooks → PGlite; a booking through
// the gateway → scheduling's outbox → in-process bus → fan-out → the in-process delivery
// worker → a local receiver. Private targets are enabled for this platform only (the
// receiver listens on 127.0.0.1, over http).
const DOCS = "https://docs.webhooks-test.example";
const API = "/api/v1alpha1";
const SEED = "webhooks-api-test";
const clock = new ManualClock(new Date("2026-03-02T10:00:00Z"));
const BOOKED = "scheduling.smartscheduler.booked";
const RESCHEDULED = "scheduling.smartscheduler.rescheduled";
const CANCELED = "scheduling.smartscheduler.canceled";

let platform: EmbeddedPlatform;
let key: string;
let readonlyKey: string;
let otherOrgKey: string;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let n = 0;

type Init = { headers?: Record<string, string>; body?: unknown; apiKey?: string };
function call(method: "GET" | "POST" | "PATCH" | "DELETE", url: string, init: Init = {}) {
  return platform.app.inject({
    method,
    url: `${API}${url}`,
    headers: {
      "x-platform-api-key": init.apiKey ?? key,
      ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
      ...(method === "POST" || method === "PATCH" ? { "idempotency-key": `wh-${++n}` } : {}),
      ...init.headers,
    },
    ...(init.body !== undefined ? { payload: JSON.stringify(init.body) } : {}),
  });
}
const problemType = (name: string) => `${DOCS}/platform-api/errors/${name}`;

async function createSubscription(body: object = {}, apiKey = key) {
  const res = await call("POST", "/webhook-subscriptions", {
    apiKey,
    body: { endpointUrl: receiver.url, events: [BOOKED, CANCELED], ...body },
  });
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string; secret: string } & Record<string, unknown>;
}

interface Slot {
  slotToken: string;
  startTime: string;
  endTime: string;
}

/**
 * Books the intro schedule's first free slot (from a preview slot token when `preview`);
 * `spare` is a later slot that does not overlap it, to reschedule to.
 */
async function bookWithSpare(preview = false) {
  const list = (await call("GET", "/smart-schedules?name=intro")).json();
  const id = list.items[0].id as string;
  const detail = (await call("GET", `/smart-schedules/${id}`)).json();
  const region = detail.matchingForm.fields.find((f: { key: string }) => f.key === "region");
  const formValues = { region: region.options[0] };
  const avail = await call("POST", `/smart-schedules/${id}/availability`, { body: { formValues, preview } });
  expect(avail.statusCode).toBe(200);
  const slots: Slot[] = avail.json().hostGroups.flatMap((g: { slots: Slot[] }[]) => g.flatMap((h) => h.slots));
  const [slot] = slots as [Slot];
  const spare = slots.find((s) => Date.parse(s.startTime) >= Date.parse(slot.endTime));
  const booked = await call("POST", "/scheduled-meetings", {
    body: {
      slotToken: slot.slotToken,
      attendee: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com" },
      formValues,
      surveyResponses: { "What would you like to discuss?": "Webhooks" },
    },
  });
  expect(booked.statusCode, booked.body).toBe(201);
  expect(spare, "a later slot to reschedule to").toBeDefined();
  return { meeting: booked.json(), spare: spare as Slot };
}

async function book(preview = false) {
  return (await bookWithSpare(preview)).meeting;
}

/** A received webhook's JSON body. */
const bodyOf = (r: Received) => JSON.parse(r.body);

/**
 * A validator of what the OpenAPI document's `webhooks` section says one event kind's
 * request body is (either payload version): the document must describe what is delivered.
 */
async function documentedBody(kind: string) {
  const doc = (await call("GET", "/openapi.json")).json();
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  const id = "https://openapi.test/webhooks-api";
  ajv.addSchema({ $id: id, components: doc.components, webhooks: doc.webhooks }, undefined, undefined, false);
  const validate = ajv.getSchema(`${id}#/webhooks/${kind}/post/requestBody/content/application~1json/schema`);
  if (!validate) throw new Error(`no documented body for ${kind}`);
  return (body: unknown) => {
    const ok = validate(body);
    return ok ? "valid" : JSON.stringify(validate.errors);
  };
}

beforeAll(async () => {
  receiver = await startReceiver();
  platform = await createEmbeddedPlatform({
    clock,
    logger: createLogger("webhooks-api-test", "silent"),
    gateway: loadConfig(gatewayConfigSpec, { PLATFORM_DOCS_URL: DOCS, LOG_LEVEL: "silent" }),
    sandboxSeed: SEED,
    seedSandbox: true,
    adminSecret: "webhooks-api-test-admin",
    env: { WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true", WEBHOOKS_POLL_MS: "20", WEBHOOKS_TIMEOUT_MS: "2000" },
  });
  const keys = await platform.sandboxKeys();
  key = keys.find((k) => k.name === "acme-full")!.key;
  readonlyKey = keys.find((k) => k.name === "acme-readonly")!.key;
  otherOrgKey = keys.find((k) => k.name === "umbrella-full")!.key;
});
afterAll(async () => {
  await platform.close();
  await receiver.close();
});
beforeEach(() => clock.advance(61_000));

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
