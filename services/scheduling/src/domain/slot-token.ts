import { createHmac, timingSafeEqual } from "node:crypto";
import { problem } from "@platform/kit/problems";
import type { SlotTokenPayload } from "./types.js";

/** How long a slot token can be booked with (the spec's slot token lifetime). */
export const SLOT_TOKEN_TTL_MS = 10 * 60 * 1000;

/** The `expiresAt` of a token issued at `now`. */
export function slotTokenExpiresAt(now: Date): string {
  return new Date(now.getTime() + SLOT_TOKEN_TTL_MS).toISOString();
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

function signature(encodedPayload: string, secret: string): string {
  return createHmac("sha256", secret).update(encodedPayload).digest("base64url");
}

function assertSecret(secret: string): void {
  // An empty HMAC key signs nothing anyone could not forge; refuse rather than mint such tokens.
  if (secret.length === 0) throw new RangeError("slot token secret must not be empty");
}

/**
 * An opaque, unprefixed, URL-safe token: base64url(JSON payload) "." base64url(HMAC-SHA256).
 * Only the payload's known fields are encoded, in a fixed order, so the same payload always
 * gives the same token. The payload is readable by anyone who decodes it: it must carry
 * nothing secret (it holds ids, times and a hash).
 */
export function signSlotToken(payload: SlotTokenPayload, secret: string): string {
  assertSecret(secret);
  const fixed: SlotTokenPayload = {
    orgId: payload.orgId,
    scheduleId: payload.scheduleId,
    hostUserId: payload.hostUserId,
    start: payload.start,
    end: payload.end,
    expiresAt: payload.expiresAt,
    preview: payload.preview,
    formValuesHash: payload.formValuesHash,
  };
  const encoded = Buffer.from(JSON.stringify(fixed), "utf8").toString("base64url");
  return `${encoded}.${signature(encoded, secret)}`;
}

function invalid(detail: string): Error {
  return problem("slot-token-invalid", detail);
}

const STRING_FIELDS = ["orgId", "scheduleId", "hostUserId", "formValuesHash"] as const;
const TIME_FIELDS = ["start", "end", "expiresAt"] as const;

function parsePayload(encoded: string): SlotTokenPayload {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(encoded, "base64url").toString("utf8"));
  } catch {
    throw invalid("The slot token is malformed.");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalid("The slot token is malformed.");
  }
  const v = value as Record<string, unknown>;
  const wellFormed =
    STRING_FIELDS.every((k) => typeof v[k] === "string") &&
    TIME_FIELDS.every((k) => typeof v[k] === "string" && !Number.isNaN(Date.parse(v[k] as string))) &&
    typeof v.preview === "boolean";
  // Only reachable with a correctly signed payload of another shape (an older token format).
  if (!wellFormed) throw invalid("The slot token is malformed.");
  return {
    orgId: v.orgId as string,
    scheduleId: v.scheduleId as string,
    hostUserId: v.hostUserId as string,
    start: v.start as string,
    end: v.end as string,
    expiresAt: v.expiresAt as string,
    preview: v.preview as boolean,
    formValuesHash: v.formValuesHash as string,
  };
}

/**
 * The payload of a token this service signed with `secret`. Throws 422 `slot-token-invalid`
 * when the token is malformed or its signature does not match (tampered, or signed with
 * another secret), and 410 `slot-token-expired` when it is genuine but `expiresAt` <= `now`.
 * The signature is checked before the payload is even parsed, and compared in constant time.
 * Whether the payload fits the request (schedule, form values) is the caller's check.
 */
export function verifySlotToken(token: string, secret: string, now: Date): SlotTokenPayload {
  assertSecret(secret);
  const parts = typeof token === "string" ? token.split(".") : [];
  const [encoded, given] = parts;
  if (parts.length !== 2 || !encoded || !given || !BASE64URL.test(encoded) || !BASE64URL.test(given)) {
    throw invalid("The slot token is malformed.");
  }
  // Comparing the canonical encodings (not decoded bytes) also rejects signatures that decode
  // to the right bytes through a non-canonical base64url spelling.
  const expected = Buffer.from(signature(encoded, secret), "utf8");
  const actual = Buffer.from(given, "utf8");
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) {
    throw invalid("The slot token signature is not valid.");
  }
  const payload = parsePayload(encoded);
  if (Date.parse(payload.expiresAt) <= now.getTime()) {
    throw problem("slot-token-expired", "The slot token has expired; run availability again for a fresh one.", {
      expiredAt: new Date(Date.parse(payload.expiresAt)).toISOString(),
    });
  }
  return payload;
}
