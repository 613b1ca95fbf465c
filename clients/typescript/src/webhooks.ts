import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import type { webhooks } from "./generated/openapi.js";

// Standard Webhooks verification (https://www.standardwebhooks.com): the platform signs
// `{webhook-id}.{webhook-timestamp}.{body}` with HMAC-SHA256 under the subscription's whsec_
// secret; for 24 h after a rotation it sends two signatures (the new secret's first).

/** Every event kind the platform delivers (the document's `webhooks`), webhook.test included. */
export type WebhookEventType = keyof webhooks;

type Delivered<K extends WebhookEventType> = NonNullable<
  webhooks[K]["post"]
>["requestBody"]["content"]["application/json"];
/**
 * A kind's own payload: the envelope schema's open `data` (Record<string, unknown>) is
 * intersected with the kind's fields, whose index signature would let any name compile.
 */
type KnownFields<T> = { [P in keyof T as string extends P ? never : P]: T[P] };
type V2Data<K extends WebhookEventType> = KnownFields<
  NonNullable<Extract<Delivered<K>, { timestamp: string }>["data"]>
>;
type LegacyPayload<K extends WebhookEventType> = KnownFields<
  NonNullable<Extract<Delivered<K>, { created_at: string }>["payload"]>
>;

/** A v2 event (subscriptions created through this API version), discriminated by `type`. */
export type WebhookEvent<K extends WebhookEventType = WebhookEventType> = {
  [T in K]: {
    /** The event id; equal to the webhook-id header, the same on every attempt: de-duplicate on it. */
    id: string;
    type: T;
    /** When the event happened (UTC, ISO 8601). */
    timestamp: string;
    data: V2Data<T>;
  };
}[K];

/** A legacy event (subscriptions that predate v2), discriminated by `event`. */
export type LegacyWebhookEvent<K extends WebhookEventType = WebhookEventType> = {
  [T in K]: {
    event: T;
    /** The event id; equal to the webhook-id header. */
    event_id: string;
    created_at: string;
    payload: LegacyPayload<T>;
  };
}[K];

/** What a subscription may receive: a v2 event or, on a legacy subscription, a legacy one. */
export type AnyWebhookEvent = WebhookEvent | LegacyWebhookEvent;

/** How far a webhook-timestamp may be from the receiver's clock (Standard Webhooks: 5 minutes). */
export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60;

/** Why a delivery was refused. */
export type WebhookVerificationFailure =
  | "missing-headers"
  | "invalid-timestamp"
  | "timestamp-too-old"
  | "timestamp-too-new"
  | "invalid-secret"
  | "no-matching-signature"
  | "invalid-json";

export class WebhookVerificationError extends Error {
  readonly reason: WebhookVerificationFailure;

  constructor(reason: WebhookVerificationFailure, message: string) {
    super(message);
    this.name = "WebhookVerificationError";
    this.reason = reason;
  }
}

/** Headers as fetch (`Headers`), Node's `req.headers` or a plain object give them. */
export type WebhookHeaders =
  | Headers
  | Record<string, string | readonly string[] | undefined>
  | { get(name: string): string | null };

export interface VerifyOptions {
  /** The receiver's clock. Default now. */
  now?: Date;
  /** Default WEBHOOK_TOLERANCE_SECONDS. */
  toleranceSeconds?: number;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === "function") {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | readonly string[] | undefined>;
  const found = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = found === undefined ? undefined : record[found];
  return typeof value === "string" ? value : value?.[0];
}

/** The HMAC key of a secret: the base64 after whsec_ (a bare base64 key is accepted too, like the reference libraries). */
function keyOf(secret: string): Buffer {
  const encoded = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret;
  const key = Buffer.from(encoded, "base64");
  if (key.length === 0)
    throw new WebhookVerificationError("invalid-secret", "the webhook secret is empty or not base64");
  return key;
}

const asBytes = (body: string | Uint8Array) =>
  typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body);

/** The three Standard Webhooks headers of a delivery (a type, not an interface: it is a WebhookHeaders record too). */
export type WebhookSignatureHeaders = {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
};

export interface TestHeaderOptions {
  /** webhook-id; default the body's `id` (an event's id is its webhook-id), else a random msg_ id. */
  id?: string;
  /** When it was "sent"; default now. Pass an old one to test that your receiver refuses it. */
  timestamp?: Date;
}

function bodyId(body: string): string | undefined {
  try {
    const id = (JSON.parse(body) as { id?: unknown; event_id?: unknown }).id;
    return typeof id === "string" && id !== "" ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Headers that sign `body` with `secret` exactly as the platform signs a delivery (Standard
 * Webhooks: HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`), for your own tests of
 * your receiver, as Stripe's `generateTestHeaderString`. Send `body` as is (the same string).
 *
 * @example
 * const body = JSON.stringify({ id: "evt_test", type: "revenue.deal.created", timestamp: new Date().toISOString(), data: {} });
 * await fetch("http://localhost:3000/webhooks", { method: "POST", headers: { "content-type": "application/json", ...generateTestWebhookHeaders(secret, body) }, body });
 */
export function generateTestWebhookHeaders(
  secret: string,
  body: string,
  options: TestHeaderOptions = {},
): WebhookSignatureHeaders {
  const id = options.id ?? bodyId(body) ?? `msg_${randomUUID().replaceAll("-", "")}`;
  const timestamp = String(Math.floor((options.timestamp ?? new Date()).getTime() / 1000));
  const signature = createHmac("sha256", keyOf(secret)).update(`${id}.${timestamp}.${body}`, "utf8").digest("base64");
  return { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": `v1,${signature}` };
}

/**
 * Verifies a delivery and returns its event. `secret` is the subscription's whsec_ secret, or
 * several (the old and the new one while you roll a rotation out): any one valid signature
 * under any of them is enough. `body` must be the raw body as received, before any JSON
 * parsing. Throws WebhookVerificationError (with `reason`) when the delivery is not authentic
 * or its timestamp is more than 5 minutes from `now`.
 */
export function verifyWebhook(
  secret: string | readonly string[],
  headers: WebhookHeaders,
  body: string | Uint8Array,
  options: VerifyOptions = {},
): AnyWebhookEvent {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError(
      "missing-headers",
      "webhook-id, webhook-timestamp and webhook-signature are required",
    );
  }
  if (!/^\d+$/.test(timestamp)) {
    throw new WebhookVerificationError("invalid-timestamp", "webhook-timestamp is not a number of seconds");
  }
  const nowSeconds = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const tolerance = options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
  const sent = Number(timestamp);
  if (sent < nowSeconds - tolerance) throw new WebhookVerificationError("timestamp-too-old", "the delivery is too old");
  if (sent > nowSeconds + tolerance) {
    throw new WebhookVerificationError("timestamp-too-new", "the delivery's timestamp is in the future");
  }

  const raw = asBytes(body);
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, "utf8"), raw]);
  const offered = signatures
    .split(" ")
    .map((s) => s.split(","))
    .filter(([version, value]) => version === "v1" && value)
    .map(([, value]) => Buffer.from(value!, "base64"));
  const secrets = typeof secret === "string" ? [secret] : secret;
  let valid = false;
  // Every comparison runs (no early exit) and each one is constant-time.
  for (const s of secrets) {
    const expected = createHmac("sha256", keyOf(s)).update(signed).digest();
    for (const candidate of offered) {
      if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) valid = true;
    }
  }
  if (!valid) throw new WebhookVerificationError("no-matching-signature", "no signature matches the secret");
  try {
    return JSON.parse(raw.toString("utf8")) as AnyWebhookEvent;
  } catch {
    throw new WebhookVerificationError("invalid-json", "the body is not JSON");
  }
}

/** True for a v2 event, false for a legacy one. */
export function isV2Event(event: AnyWebhookEvent): event is WebhookEvent {
  return "type" in event && "data" in event;
}
