import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { GetAvailabilityResponseSchema } from "@platform/contracts/scheduling";
import { describe, expect, it } from "vitest";
import { availabilityBody, isCompactAvailability } from "../src/mapping/availability-body.js";
import { availabilityJson } from "../src/mapping/scheduling.js";

// The gateway writes a compact availability answer straight into JSON bytes; it must be exactly
// the JSON of the object mapping of the same slots in the one-message-per-slot form, whether
// scheduling sent each token whole or each host's tokens as a shared head and per-slot tails.

const HEAD_BYTES = 36;
const TAIL_BYTES = 18;
const hosts = [
  {
    userId: "usr_a",
    displayName: 'Ada "the Countess" Lovelace \u2028',
    // 16:00, 16:30, the next day 16:00, and 23:30 whose end (45 minutes) is past midnight.
    starts: [29_400_000, 29_400_030, 29_401_440, 29_400_450],
  },
  { userId: "usr_b", displayName: "Bob", starts: [] },
  { userId: "usr_c", displayName: "Chloé", starts: [29_400_030] },
].map((h) => {
  const head = randomBytes(HEAD_BYTES);
  const tails = randomBytes(h.starts.length * TAIL_BYTES);
  const tokens = h.starts.map((_, i) =>
    Buffer.concat([head, tails.subarray(i * TAIL_BYTES, (i + 1) * TAIL_BYTES)]).toString("base64url"),
  );
  return { ...h, head: head.toString("base64url"), tails, tokens };
});
const groups = [[hosts[0]!, hosts[1]!], [hosts[2]!], []];
const matchTime = timestampFromDate(new Date("2026-11-25T12:34:56.789Z"));
const minute = (m: number) => timestampFromDate(new Date(m * 60_000));
type Host = (typeof hosts)[number];
const answer = (fields: (h: Host) => object) =>
  create(GetAvailabilityResponseSchema, {
    matchTime,
    hostGroups: groups.map((g) => ({
      hosts: g.map((h) => ({ host: { userId: h.userId, displayName: h.displayName }, ...fields(h) })),
    })),
  });

const perSlot = answer((h) => ({
  slots: h.starts.map((s, i) => ({ startTime: minute(s), endTime: minute(s + 45), slotToken: h.tokens[i] })),
}));
const whole = answer((h) => ({
  startMinutes: h.starts,
  durationMinutes: 45,
  slotTokens: h.tokens.join(""),
  slotTokenLength: 72,
}));
const parts = answer((h) => ({
  startMinutes: h.starts,
  durationMinutes: 45,
  slotTokenHead: h.head,
  slotTokenTails: h.tails,
  slotTokenTailBytes: TAIL_BYTES,
}));

describe("availabilityBody", () => {
  it("is the JSON of availabilityJson for the same slots, from whole tokens and from token parts", () => {
    expect(isCompactAvailability(whole)).toBe(true);
    expect(isCompactAvailability(parts)).toBe(true);
    expect(isCompactAvailability(perSlot)).toBe(false);
    const expected = JSON.stringify(availabilityJson(perSlot));
    expect(availabilityBody(whole).toString("utf8")).toBe(expected);
    expect(availabilityBody(parts).toString("utf8")).toBe(expected);
    const slots = JSON.parse(expected).hostGroups[0][0].slots;
    expect(slots[1]).toEqual({
      startTime: "2025-11-24T16:30:00.000Z",
      endTime: "2025-11-24T17:15:00.000Z",
      slotToken: hosts[0]!.tokens[1],
    });
    expect(slots[3]).toMatchObject({ startTime: "2025-11-24T23:30:00.000Z", endTime: "2025-11-25T00:15:00.000Z" });
    expect(slots[3].slotToken).toMatch(/^[A-Za-z0-9_-]{72}$/);
  });

  it("refuses tokens that do not match the slots (a scheduling bug, not a client error)", () => {
    const broken = (fields: object) =>
      create(GetAvailabilityResponseSchema, {
        matchTime,
        hostGroups: [{ hosts: [{ host: { userId: "usr_a", displayName: "Ada" }, startMinutes: [1, 2], ...fields }] }],
      });
    expect(() => availabilityBody(broken({ slotTokens: "x", slotTokenLength: 72 }))).toThrow(Error);
    expect(() =>
      availabilityBody(broken({ slotTokens: `${"a".repeat(71)}"${"a".repeat(72)}`, slotTokenLength: 72 })),
    ).toThrow(Error);
    const head = "A".repeat(48);
    expect(() =>
      availabilityBody(broken({ slotTokenHead: head, slotTokenTails: new Uint8Array(35), slotTokenTailBytes: 18 })),
    ).toThrow(Error);
    expect(() =>
      availabilityBody(
        broken({ slotTokenHead: `${head.slice(1)}"`, slotTokenTails: new Uint8Array(36), slotTokenTailBytes: 18 }),
      ),
    ).toThrow(Error);
    expect(() =>
      availabilityBody(broken({ slotTokenHead: head, slotTokenTails: new Uint8Array(34), slotTokenTailBytes: 17 })),
    ).toThrow(Error);
  });
});
