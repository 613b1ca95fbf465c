import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  type AnyWebhookEvent,
  isV2Event,
  type LegacyWebhookEvent,
  type Meeting,
  verifyWebhook,
  WEBHOOK_TOLERANCE_SECONDS,
  WebhookVerificationError,
} from "../src/index.js";

// verifyWebhook against the reference implementation (the standardwebhooks package): what it
// signs verifies here, and what it refuses is refused here too.

const secret = () => `whsec_${randomBytes(32).toString("base64")}`;
const NOW = new Date("2026-03-02T10:00:00Z");

function signed(key: string, body: string, at = NOW, id = "msg_2mXjvTjrNLe0Zc1s") {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(key).sign(id, at, body),
  };
}

const v2 = JSON.stringify({
  id: "msg_2mXjvTjrNLe0Zc1s",
  type: "webhook.test",
  timestamp: NOW.toISOString(),
  data: { subscriptionId: "sub_1", message: "ping" },
});

function failure(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(WebhookVerificationError);
    return (err as WebhookVerificationError).reason;
  }
  throw new Error("verified, but should not have");
}

describe("verifyWebhook", () => {
  it("accepts what the reference library signs, and both agree on the result", () => {
    const key = secret();
    const headers = signed(key, v2);
    const event = verifyWebhook(key, headers, v2, { now: NOW });
    expect(event).toEqual(JSON.parse(v2));
    // The reference accepts the same delivery (at its own clock, so sign it now).
    const fresh = signed(key, v2, new Date());
    expect(new Webhook(key).verify(v2, fresh)).toEqual(event);
    expect(verifyWebhook(key, fresh, v2)).toEqual(event);
  });

  it("takes fetch Headers, Node's header object and raw bytes", () => {
    const key = secret();
    const headers = signed(key, v2);
    expect(verifyWebhook(key, new Headers(headers), Buffer.from(v2), { now: NOW })).toMatchObject({
      type: "webhook.test",
    });
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), [v]]));
    expect(verifyWebhook(key, upper, new TextEncoder().encode(v2), { now: NOW })).toMatchObject({
      type: "webhook.test",
    });
  });

  it("accepts any of several secrets and any of several signatures (a rotation)", () => {
    const [oldKey, newKey, stranger] = [secret(), secret(), secret()];
    const both = signed(newKey, v2);
    both["webhook-signature"] += ` ${signed(oldKey, v2)["webhook-signature"]}`;
    expect(verifyWebhook(oldKey, both, v2, { now: NOW })).toBeDefined();
    expect(verifyWebhook(newKey, both, v2, { now: NOW })).toBeDefined();
    expect(verifyWebhook([stranger, newKey], both, v2, { now: NOW })).toBeDefined();
    // After the grace period only the new secret signs; a receiver holding both still verifies.
    expect(verifyWebhook([oldKey, newKey], signed(newKey, v2), v2, { now: NOW })).toBeDefined();
    expect(failure(() => verifyWebhook([oldKey, stranger], signed(newKey, v2), v2, { now: NOW }))).toBe(
      "no-matching-signature",
    );
  });

  it("refuses a tampered body, id or timestamp, a wrong secret and unknown signature versions", () => {
    const key = secret();
    const headers = signed(key, v2);
    expect(failure(() => verifyWebhook(key, headers, v2.replace("ping", "pong"), { now: NOW }))).toBe(
      "no-matching-signature",
    );
    expect(failure(() => verifyWebhook(key, { ...headers, "webhook-id": "msg_other" }, v2, { now: NOW }))).toBe(
      "no-matching-signature",
    );
    const later = String(Number(headers["webhook-timestamp"]) + 1);
    expect(failure(() => verifyWebhook(key, { ...headers, "webhook-timestamp": later }, v2, { now: NOW }))).toBe(
      "no-matching-signature",
    );
    expect(failure(() => verifyWebhook(secret(), headers, v2, { now: NOW }))).toBe("no-matching-signature");
    const v2sig = headers["webhook-signature"].replace(/^v1,/, "v2,");
    expect(failure(() => verifyWebhook(key, { ...headers, "webhook-signature": v2sig }, v2, { now: NOW }))).toBe(
      "no-matching-signature",
    );
    // Same length as a real signature, one bit off: still refused (and compared in constant time).
    const mac = Buffer.from(headers["webhook-signature"].slice(3), "base64");
    mac[0] = (mac[0] ?? 0) ^ 1;
    const flipped = `v1,${mac.toString("base64")}`;
    expect(failure(() => verifyWebhook(key, { ...headers, "webhook-signature": flipped }, v2, { now: NOW }))).toBe(
      "no-matching-signature",
    );
    expect(failure(() => verifyWebhook(key, { "webhook-id": "x" }, v2, { now: NOW }))).toBe("missing-headers");
    expect(failure(() => verifyWebhook("whsec_", headers, v2, { now: NOW }))).toBe("invalid-secret");
  });

  it("refuses timestamps more than 5 minutes from the receiver's clock, like the reference", () => {
    const key = secret();
    expect(WEBHOOK_TOLERANCE_SECONDS).toBe(300);
    const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);
    expect(verifyWebhook(key, signed(key, v2, at(-300)), v2, { now: NOW })).toBeDefined();
    expect(verifyWebhook(key, signed(key, v2, at(300)), v2, { now: NOW })).toBeDefined();
    expect(failure(() => verifyWebhook(key, signed(key, v2, at(-301)), v2, { now: NOW }))).toBe("timestamp-too-old");
    expect(failure(() => verifyWebhook(key, signed(key, v2, at(301)), v2, { now: NOW }))).toBe("timestamp-too-new");
    const stale = signed(key, v2, new Date(Date.now() - 301_000));
    expect(() => new Webhook(key).verify(v2, stale)).toThrow();
    expect(failure(() => verifyWebhook(key, stale, v2))).toBe("timestamp-too-old");
    expect(
      failure(() => verifyWebhook(key, { ...signed(key, v2), "webhook-timestamp": "soon" }, v2, { now: NOW })),
    ).toBe("invalid-timestamp");
  });

  it("returns the typed v2 or legacy event", () => {
    const key = secret();
    const legacy = JSON.stringify({
      event: "scheduling.smartscheduler.canceled",
      event_id: "evt_1",
      created_at: NOW.toISOString(),
      payload: { meeting: { id: "mtg_1" }, reason: null },
    });
    const event: AnyWebhookEvent = verifyWebhook(key, signed(key, legacy), legacy, { now: NOW });
    expect(isV2Event(event)).toBe(false);
    if (!isV2Event(event) && event.event === "scheduling.smartscheduler.canceled") {
      expectTypeOf(event).toEqualTypeOf<LegacyWebhookEvent<"scheduling.smartscheduler.canceled">>();
      expect(event.payload.reason).toBeNull();
    }
    const booked = verifyWebhook(key, signed(key, v2), v2, { now: NOW });
    if (isV2Event(booked) && booked.type === "scheduling.smartscheduler.booked") {
      expectTypeOf(booked.data.meeting).toEqualTypeOf<Meeting>();
    }
  });
});
