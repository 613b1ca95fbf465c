import { gatewayConfigSpec } from "@platform/gateway/config";
import { ManualClock } from "@platform/kit/clock";
import { loadConfig } from "@platform/kit/config";
import { createLogger } from "@platform/kit/logger";
import { eventually } from "@platform/kit/testing";
import { sandboxSubscriptionId } from "@platform/webhooks/server";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Received, startReceiver, verifyWebhook } from "../../services/webhooks/test/builders.js";
import { createEmbeddedPlatform, type EmbeddedPlatform } from "../src/platform.js";

// Webhooks end to end on the embedded platform: gateway → webhooks → PGlite; a booking through
// the gateway → scheduling's outbox → in-process bus → fan-out → the in-process delivery
// worker → a local receiver. Private targets are enabled for this platform only (the
// receiver listens on 127.0.0.1, over http).
const DOCS = "https://docs.webhooks-test.example";
const API = "/api/v1alpha1";
const SEED = "webhooks-api-test";
const clock = new ManualClock(new Date("2026-03-02T10:00:00Z"));
const BOOKED = "scheduling.smartscheduler.booked";
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

async function book(preview = false) {
  const list = (await call("GET", "/smart-schedules?name=intro")).json();
  const id = list.items[0].id as string;
  const detail = (await call("GET", `/smart-schedules/${id}`)).json();
  const region = detail.matchingForm.fields.find((f: { key: string }) => f.key === "region");
  const formValues = { region: region.options[0] };
  const avail = await call("POST", `/smart-schedules/${id}/availability`, { body: { formValues, preview } });
  expect(avail.statusCode).toBe(200);
  const slot = avail.json().hostGroups.flatMap((g: { slots: unknown[] }[]) => g.flatMap((h) => h.slots))[0];
  const booked = await call("POST", "/scheduled-meetings", {
    body: {
      slotToken: slot.slotToken,
      attendee: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com" },
      formValues,
      surveyResponses: { "What would you like to discuss?": "Webhooks" },
    },
  });
  expect(booked.statusCode, booked.body).toBe(201);
  return booked.json();
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
    await eventually("the redelivery", () =>
      receiver.received.filter((x) => x.headers["webhook-id"] === r.headers["webhook-id"]).length === 2
        ? true
        : undefined,
    );
    await call("DELETE", `/webhook-subscriptions/${sub.id}`);
  });

  it("a preview booking delivers nothing; the test ping does", async () => {
    const sub = await createSubscription();
    const before = receiver.received.length;
    const meeting = await book(true);
    expect(meeting.smartScheduling.preview).toBe(true);
    const ping = await call("POST", `/webhook-subscriptions/${sub.id}/test`);
    expect(ping.statusCode).toBe(202);
    expect(ping.json()).toMatchObject({ eventType: "webhook.test", trigger: "test" });
    const r = await eventually("the ping", () =>
      receiver.received.slice(before).find((x) => x.headers["webhook-id"] === ping.json().eventId),
    );
    verifyWebhook(sub.secret, r, clock.now());
    await platform.drainOutbox();
    await platform.bus.idle();
    expect(receiver.received.slice(before).some((x) => JSON.parse(x.body).data?.meeting?.id === meeting.id)).toBe(
      false,
    );
    await call("DELETE", `/webhook-subscriptions/${sub.id}`);
  });
});
