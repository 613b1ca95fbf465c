import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { GetAvailabilityResponseSchema } from "@platform/contracts/scheduling";
import { describe, expect, it } from "vitest";
import { availabilityBody, availabilityJson, isCompactAvailability } from "../src/mapping/scheduling.js";

// The gateway writes a compact availability answer straight into a JSON string; it must be
// exactly the JSON of the object mapping of the same slots in the one-message-per-slot form.

const TOKEN_LENGTH = 72;
const token = (host: number, i: number) => `${host}`.repeat(TOKEN_LENGTH - 4) + String(i).padStart(4, "0");
const hosts = [
  { userId: "usr_a", displayName: 'Ada "the Countess" Lovelace \u2028', starts: [29_400_000, 29_400_030, 29_401_440] },
  { userId: "usr_b", displayName: "Bob", starts: [] },
  { userId: "usr_c", displayName: "Chloé", starts: [29_400_030] },
];
const groups = [[hosts[0]!, hosts[1]!], [hosts[2]!], []];
const matchTime = timestampFromDate(new Date("2026-11-25T12:34:56.789Z"));
const minute = (m: number) => timestampFromDate(new Date(m * 60_000));

const compact = create(GetAvailabilityResponseSchema, {
  matchTime,
  hostGroups: groups.map((g) => ({
    hosts: g.map((h, n) => ({
      host: { userId: h.userId, displayName: h.displayName },
      startMinutes: h.starts,
      durationMinutes: 45,
      slotTokens: h.starts.map((_, i) => token(n, i)).join(""),
      slotTokenLength: TOKEN_LENGTH,
    })),
  })),
});
const perSlot = create(GetAvailabilityResponseSchema, {
  matchTime,
  hostGroups: groups.map((g) => ({
    hosts: g.map((h, n) => ({
      host: { userId: h.userId, displayName: h.displayName },
      slots: h.starts.map((s, i) => ({ startTime: minute(s), endTime: minute(s + 45), slotToken: token(n, i) })),
    })),
  })),
});

describe("availabilityBody", () => {
  it("is the JSON of availabilityJson for the same slots", () => {
    expect(isCompactAvailability(compact)).toBe(true);
    expect(isCompactAvailability(perSlot)).toBe(false);
    const body = availabilityBody(compact).toString("utf8");
    expect(body).toBe(JSON.stringify(availabilityJson(perSlot)));
    expect(JSON.parse(body).hostGroups[0][0].slots[1]).toEqual({
      startTime: "2025-11-24T16:30:00.000Z",
      endTime: "2025-11-24T17:15:00.000Z",
      slotToken: token(0, 1),
    });
  });

  it("refuses tokens that do not match the slots (a scheduling bug, not a client error)", () => {
    const broken = create(GetAvailabilityResponseSchema, {
      matchTime,
      hostGroups: [
        {
          hosts: [
            {
              host: { userId: "usr_a", displayName: "Ada" },
              startMinutes: [1, 2],
              slotTokens: "x",
              slotTokenLength: 72,
            },
          ],
        },
      ],
    });
    expect(() => availabilityBody(broken)).toThrow(Error);
  });
});
