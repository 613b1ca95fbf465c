import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, beforeEach, expect } from "vitest";
import type { EmbeddedPlatform } from "../../src/platform.js";
import { apiTest, CLOSE_TIMEOUT_MS, START_TIMEOUT_MS } from "../support/platform.js";
import { type Received, startReceiver } from "../support/webhook-receiver.js";

// Webhooks end to end on the embedded platform: gateway → webhooks → PGlite; a booking through
// the gateway → scheduling's outbox → in-process bus → fan-out → the in-process delivery
// worker → a local receiver. Private targets are enabled for this platform only (the
// receiver listens on 127.0.0.1, over http). Each test file of this folder starts a platform
// of its own with this setup.
export const SEED = "webhooks-api-test";
export const BOOKED = "scheduling.smartscheduler.booked";
export const RESCHEDULED = "scheduling.smartscheduler.rescheduled";
export const CANCELED = "scheduling.smartscheduler.canceled";
export const t = apiTest({
  name: SEED,
  platform: { env: { WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true", WEBHOOKS_POLL_MS: "20", WEBHOOKS_TIMEOUT_MS: "2000" } },
});
export const { call, problemType, clock } = t;
export let platform: EmbeddedPlatform;
export let key: string;
export let readonlyKey: string;
export let otherOrgKey: string;
export let receiver: Awaited<ReturnType<typeof startReceiver>>;

export async function createSubscription(body: object = {}, apiKey = key) {
  const res = await call("POST", "/webhook-subscriptions", {
    apiKey,
    body: { endpointUrl: receiver.url, events: [BOOKED, CANCELED], ...body },
  });
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string; secret: string } & Record<string, unknown>;
}

export interface Slot {
  slotToken: string;
  startTime: string;
  endTime: string;
}

/**
 * Books the intro schedule's first free slot (from a preview slot token when `preview`);
 * `spare` is a later slot that does not overlap it, to reschedule to.
 */
export async function bookWithSpare(preview = false) {
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

export async function book(preview = false) {
  return (await bookWithSpare(preview)).meeting;
}

/** A received webhook's JSON body. */
export const bodyOf = (r: Received) => JSON.parse(r.body);

/**
 * A validator of what the OpenAPI document's `webhooks` section says one event kind's
 * request body is (either payload version): the document must describe what is delivered.
 */
export async function documentedBody(kind: string) {
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

/** Starts the receiver and the platform before the file's tests. */
export function useWebhooksPlatform(): void {
  beforeAll(async () => {
    receiver = await startReceiver();
    platform = await t.start();
    key = t.keys["acme-full"]!;
    readonlyKey = t.keys["acme-readonly"]!;
    otherOrgKey = t.keys["umbrella-full"]!;
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    await t.close();
    await receiver.close();
  }, CLOSE_TIMEOUT_MS);
  beforeEach(() => clock.advance(61_000));
}
