import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from "node:crypto";
import { problem } from "@platform/kit/problems";
import type { SlotTokenPayload } from "./model.js";
import { SLOT_MAC_MESSAGE_BYTES, slotMac } from "./slot-mac.js";

/** How long a slot token can be booked with (the spec's slot token lifetime). */
export const SLOT_TOKEN_TTL_MS = 10 * 60 * 1000;

/** The `expiresAt` of a token issued at `now`. */
export function slotTokenExpiresAt(now: Date): string {
  return new Date(now.getTime() + SLOT_TOKEN_TTL_MS).toISOString();
}

// Format 2, the compact token: 54 bytes, base64url, 72 characters, no separator. Availability
// signs one per slot, often ten thousand per answer, so its size is most of the response and
// its signing most of the CPU. Fields that the verifier already knows are bound by the MAC
// without being carried: the org (the MAC key is derived from it) and the form values (a
// keyed tag of their hash is carried, because rescheduling must verify a token without them).
//
//   bytes  0–1   version (3 bits, = 2) · preview (1 bit) · duration in minutes (12 bits, 1–4095)
//          2–16  schedule id, the 24 base32 characters after "sched_" as 15 bytes
//         17–31  host user id, the 24 base32 characters after "usr_" as 15 bytes
//         32–35  expiry, seconds since the Unix epoch (uint32)
//         36–38  start, minutes since (expiry's minute − 16) (uint24: up to 31 years ahead)
//         39–41  form tag: HMAC(org key, "form:" + formValuesHash), first 3 bytes
//         42–53  MAC: HMAC-SHA256(org key, bytes 0–41), first 12 bytes (96 bits)
//
// 96 bits is above RFC 2104's 80-bit floor for truncated tags; a token is only ever checked
// online, lives 10 minutes and bookings are rate limited. The form tag only keeps a booking's
// stored form values those that routed the host; guessing it also takes online attempts.
// Format 1 (base64url JSON "." base64url HMAC, ~400 characters) is still verified, so that
// tokens issued before an upgrade stay bookable for their 10 minutes.

const VERSION = 2;
const TOKEN_BYTES = 54;
/** Characters of a format-2 token (54 bytes in base64url, no padding). */
export const SLOT_TOKEN_LENGTH = 72;
const SIGNED_BYTES = SLOT_MAC_MESSAGE_BYTES;
const MAC_BYTES = 12;
const FORM_TAG_BYTES = 3;
const MAX_DURATION_MINUTES = 0xfff;
const START_BIAS_MINUTES = 16;
const MAX_START_OFFSET = 0xffffff;
const COMPACT = /^[A-Za-z0-9_-]{72}$/;

const ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
const ID_VALUE = new Map([...ID_ALPHABET].map((c, i) => [c, i]));
const ID_BODY = /^[0-9a-hjkmnp-tv-z]{24}$/;

/** Writes the 24 base32 characters of an id body as 15 bytes at `offset`. */
function writeIdBody(body: string, out: Buffer, offset: number): void {
  let acc = 0;
  let bits = 0;
  let at = offset;
  for (const c of body) {
    acc = ((acc << 5) | ID_VALUE.get(c)!) & 0x1fff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out[at++] = (acc >>> bits) & 0xff;
    }
  }
}

function readIdBody(bytes: Buffer, offset: number): string {
  let acc = 0;
  let bits = 0;
  let body = "";
  for (let i = offset; i < offset + 15; i++) {
    acc = ((acc << 8) | bytes[i]!) & 0xfff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      body += ID_ALPHABET[(acc >>> bits) & 31];
    }
  }
  return body;
}

function idBody(prefix: string, id: string): string {
  const body = id.slice(prefix.length);
  if (!id.startsWith(prefix) || !ID_BODY.test(body)) throw new RangeError(`not a ${prefix} id: ${id}`);
  return body;
}

function assertSecret(secret: string): void {
  // An empty HMAC key signs nothing anyone could not forge; refuse rather than mint such tokens.
  if (secret.length === 0) throw new RangeError("slot token secret must not be empty");
}

/** The MAC key of one org's tokens: a token of another org never verifies. */
function orgKeyBytes(secret: string, orgId: string): Buffer {
  assertSecret(secret);
  return createHmac("sha256", secret).update(`slot-token:2:${orgId}`).digest();
}

const orgKey = (secret: string, orgId: string): KeyObject => createSecretKey(orgKeyBytes(secret, orgId));

function formTag(key: KeyObject, formValuesHash: string): Buffer {
  return createHmac("sha256", key).update(`form:${formValuesHash}`).digest().subarray(0, FORM_TAG_BYTES);
}

/** What every token of one availability answer shares. */
export interface SlotTokenClaims {
  orgId: string;
  scheduleId: string;
  expiresAt: Date;
  preview: boolean;
  durationMinutes: number;
  /** `formValuesHash` of the form values the availability was computed for. */
  formValuesHash: string;
}

/**
 * Bytes 0–35 of a token, the same for all of one host's slots in one answer: its head. A whole
 * number of base64 groups, so a token's text is the head's base64url followed by its tail's.
 */
export const SLOT_TOKEN_HEAD_BYTES = 36;
/** Bytes 36–53 of a token, its tail: the start, the form tag and the MAC. */
export const SLOT_TOKEN_TAIL_BYTES = TOKEN_BYTES - SLOT_TOKEN_HEAD_BYTES;

// The starts' offsets of the host being signed, MACed together once its tails are laid out.
// One for the thread: signTails runs to its end before any other signer's can start.
const OFFSETS = new Int32Array(4096);

/** Signs the slot tokens of one availability answer. */
export interface SlotTokenSigner {
  /** The base64url text every token of `hostUserId`'s slots starts with (48 characters). */
  head(hostUserId: string): string;
  /**
   * Writes the tails of `hostUserId`'s slots `startsMs[from]`..`startsMs[to - 1]` (ms since the
   * epoch, whole minutes) into `tails`, slot i's at `i * SLOT_TOKEN_TAIL_BYTES`.
   */
  signTails(hostUserId: string, startsMs: ArrayLike<number>, from: number, to: number, tails: Uint8Array): void;
  /**
   * The tokens of `hostUserId`'s slots starting at `startsMs`, concatenated in that order, each
   * `SLOT_TOKEN_LENGTH` characters.
   */
  tokens(hostUserId: string, startsMs: readonly number[]): string;
}

/** The tokens of one host's slots, concatenated, from their head and tails. */
export function joinSlotTokens(head: string, tails: Uint8Array): string {
  const headBytes = Buffer.from(head, "base64url");
  const count = tails.length / SLOT_TOKEN_TAIL_BYTES;
  const out = Buffer.allocUnsafe(count * TOKEN_BYTES);
  for (let i = 0; i < count; i++) {
    headBytes.copy(out, i * TOKEN_BYTES);
    out.set(
      tails.subarray(i * SLOT_TOKEN_TAIL_BYTES, (i + 1) * SLOT_TOKEN_TAIL_BYTES),
      i * TOKEN_BYTES + SLOT_TOKEN_HEAD_BYTES,
    );
  }
  // 54 bytes are a whole number of base64 groups: the concatenation is the tokens' concatenation.
  return out.toString("base64url");
}

/**
 * A signer for `claims`: the shared fields are encoded once, each slot costs one HMAC.
 * Signing thousands of tokens per answer is the hot path, so the MACs come from `slotMac`
 * (slot-mac.ts), an HMAC-SHA256 keyed once whose per-message work is only what a slot's start
 * changes (about a third of a general HMAC's), computed four slots at a time where WebAssembly
 * SIMD runs (slot-mac-lanes.ts), and per slot only the tail is written.
 * Verification, one token at a time, uses node:crypto: the MACs are the same HMAC-SHA256.
 */
export function slotTokenSigner(secret: string, claims: SlotTokenClaims): SlotTokenSigner {
  const keyBytes = orgKeyBytes(secret, claims.orgId);
  const key = createSecretKey(keyBytes);
  const mac = slotMac(keyBytes);
  const { durationMinutes } = claims;
  if (!Number.isInteger(durationMinutes) || durationMinutes < 1 || durationMinutes > MAX_DURATION_MINUTES) {
    throw new RangeError(`slot tokens hold durations of 1 to ${MAX_DURATION_MINUTES} minutes, not ${durationMinutes}`);
  }
  const expirySeconds = Math.ceil(claims.expiresAt.getTime() / 1000);
  const baseMinute = Math.floor(expirySeconds / 60) - START_BIAS_MINUTES;
  const template = Buffer.alloc(SIGNED_BYTES);
  template.writeUInt16BE((VERSION << 13) | (claims.preview ? 1 << 12 : 0) | durationMinutes, 0);
  writeIdBody(idBody("sched_", claims.scheduleId), template, 2);
  template.writeUInt32BE(expirySeconds, 32);
  const form = formTag(key, claims.formValuesHash);
  form.copy(template, 39);
  const [form0, form1, form2] = [form[0]!, form[1]!, form[2]!];
  const forHost = (hostUserId: string) => writeIdBody(idBody("usr_", hostUserId), template, 17);
  const signer: SlotTokenSigner = {
    head(hostUserId) {
      forHost(hostUserId);
      return template.subarray(0, SLOT_TOKEN_HEAD_BYTES).toString("base64url");
    },
    signTails(hostUserId, startsMs, from, to, tails) {
      forHost(hostUserId);
      mac.setMessage(template);
      const offsets = to - from <= OFFSETS.length ? OFFSETS : new Int32Array(to - from);
      for (let i = from; i < to; i++) {
        const offset = startsMs[i]! / 60_000 - baseMinute;
        if (!Number.isInteger(offset) || offset < 0 || offset > MAX_START_OFFSET) {
          throw new RangeError(`slot start ${new Date(startsMs[i]!).toISOString()} cannot be encoded in a slot token`);
        }
        const at = i * SLOT_TOKEN_TAIL_BYTES;
        tails[at] = offset >>> 16;
        tails[at + 1] = (offset >>> 8) & 0xff;
        tails[at + 2] = offset & 0xff;
        tails[at + 3] = form0;
        tails[at + 4] = form1;
        tails[at + 5] = form2;
        offsets[i - from] = offset;
      }
      mac.tags(offsets, to - from, tails, from * SLOT_TOKEN_TAIL_BYTES + 6, SLOT_TOKEN_TAIL_BYTES);
    },
    tokens(hostUserId, startsMs) {
      const tails = Buffer.allocUnsafe(startsMs.length * SLOT_TOKEN_TAIL_BYTES);
      signer.signTails(hostUserId, startsMs, 0, startsMs.length, tails);
      return joinSlotTokens(signer.head(hostUserId), tails);
    },
  };
  return signer;
}

/** One token: `slotTokenSigner` for a single slot. */
export function signSlotToken(claims: SlotTokenClaims & { hostUserId: string; start: Date }, secret: string): string {
  return slotTokenSigner(secret, claims).tokens(claims.hostUserId, [claims.start.getTime()]);
}

/** What a genuine token says about its slot. */
export interface VerifiedSlotToken {
  scheduleId: string;
  hostUserId: string;
  start: Date;
  end: Date;
  expiresAt: Date;
  preview: boolean;
  /** Whether the token was issued for form values with this `formValuesHash`. */
  issuedFor(formValuesHash: string): boolean;
}

function invalid(detail: string): Error {
  return problem("slot-token-invalid", detail);
}

function expired(expiresAt: Date): Error {
  return problem("slot-token-expired", "The slot token has expired; run availability again for a fresh one.", {
    expiredAt: expiresAt.toISOString(),
  });
}

/**
 * The slot of a token this service signed with `secret` for `orgId`. Throws 422
 * `slot-token-invalid` when the token is malformed, of an unknown format, of another org or
 * its MAC does not match (tampered, or signed with another secret), and 410
 * `slot-token-expired` when it is genuine but expired at `now`. The MAC is checked, in
 * constant time, before anything else of the payload is believed. Whether the token fits
 * the request (schedule, form values) is the caller's check.
 */
export function verifySlotToken(token: string, secret: string, orgId: string, now: Date): VerifiedSlotToken {
  assertSecret(secret);
  if (typeof token === "string" && token.includes(".")) return verifyFormat1(token, secret, orgId, now);
  if (typeof token !== "string" || !COMPACT.test(token)) throw invalid("The slot token is malformed.");
  // 72 base64url characters are exactly 54 bytes, with no padding bits to vary.
  const bytes = Buffer.from(token, "base64url");
  const header = bytes.readUInt16BE(0);
  if (header >>> 13 !== VERSION) throw invalid("The slot token is of an unknown format.");
  const key = orgKey(secret, orgId);
  const mac = createHmac("sha256", key).update(bytes.subarray(0, SIGNED_BYTES)).digest().subarray(0, MAC_BYTES);
  if (!timingSafeEqual(mac, bytes.subarray(SIGNED_BYTES))) throw invalid("The slot token signature is not valid.");
  const durationMinutes = header & MAX_DURATION_MINUTES;
  const expirySeconds = bytes.readUInt32BE(32);
  const startMinute = Math.floor(expirySeconds / 60) - START_BIAS_MINUTES + bytes.readUIntBE(36, 3);
  const expiresAt = new Date(expirySeconds * 1000);
  if (expiresAt.getTime() <= now.getTime()) throw expired(expiresAt);
  const tag = Buffer.from(bytes.subarray(39, SIGNED_BYTES));
  return {
    scheduleId: `sched_${readIdBody(bytes, 2)}`,
    hostUserId: `usr_${readIdBody(bytes, 17)}`,
    start: new Date(startMinute * 60_000),
    end: new Date((startMinute + durationMinutes) * 60_000),
    expiresAt,
    preview: (header & (1 << 12)) !== 0,
    issuedFor: (formValuesHash) => timingSafeEqual(formTag(key, formValuesHash), tag),
  };
}

// Format 1, verify only: base64url(JSON payload) "." base64url(HMAC-SHA256(secret)).

const BASE64URL = /^[A-Za-z0-9_-]+$/;
const STRING_FIELDS = ["orgId", "scheduleId", "hostUserId", "formValuesHash"] as const;
const TIME_FIELDS = ["start", "end", "expiresAt"] as const;

function parseFormat1(encoded: string): SlotTokenPayload {
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
  // Only reachable with a correctly signed payload of another shape.
  if (!wellFormed) throw invalid("The slot token is malformed.");
  return v as unknown as SlotTokenPayload;
}

function verifyFormat1(token: string, secret: string, orgId: string, now: Date): VerifiedSlotToken {
  const parts = token.split(".");
  const [encoded, given] = parts;
  if (parts.length !== 2 || !encoded || !given || !BASE64URL.test(encoded) || !BASE64URL.test(given)) {
    throw invalid("The slot token is malformed.");
  }
  // Comparing the canonical encodings (not decoded bytes) also rejects signatures that decode
  // to the right bytes through a non-canonical base64url spelling.
  const expected = Buffer.from(createHmac("sha256", secret).update(encoded).digest("base64url"), "utf8");
  const actual = Buffer.from(given, "utf8");
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) {
    throw invalid("The slot token signature is not valid.");
  }
  const payload = parseFormat1(encoded);
  const expiresAt = new Date(Date.parse(payload.expiresAt));
  if (expiresAt.getTime() <= now.getTime()) throw expired(expiresAt);
  if (payload.orgId !== orgId) throw invalid("The slot token was not issued to this organization.");
  return {
    scheduleId: payload.scheduleId,
    hostUserId: payload.hostUserId,
    start: new Date(payload.start),
    end: new Date(payload.end),
    expiresAt,
    preview: payload.preview,
    issuedFor: (formValuesHash) => formValuesHash === payload.formValuesHash,
  };
}
