import { createHmac } from "node:crypto";
import { newId } from "@platform/kit/ids";
import { describe, expect, it } from "vitest";
import {
  SLOT_TOKEN_LENGTH,
  SLOT_TOKEN_TTL_MS,
  type SlotTokenClaims,
  signSlotToken,
  slotTokenExpiresAt,
  slotTokenSigner,
  verifySlotToken,
} from "../../src/domain/slot-token.js";
import { aSlotTokenPayload, problemName } from "./builders.js";

const secret = "test-secret-0123456789";
const issuedAt = new Date("2026-03-10T12:00:00.000Z");
const orgId = newId("org_");
const scheduleId = newId("sched_");
const hostUserId = newId("usr_");
const start = new Date("2026-03-10T14:00:00.000Z");
const hash = "a".repeat(64);
const claims: SlotTokenClaims = {
  orgId,
  scheduleId,
  expiresAt: new Date(slotTokenExpiresAt(issuedAt)),
  preview: false,
  durationMinutes: 30,
  formValuesHash: hash,
};
const token = signSlotToken({ ...claims, hostUserId, start }, secret);

function flipChar(s: string, index: number): string {
  const c = s[index]!;
  return s.slice(0, index) + (c === "A" ? "B" : "A") + s.slice(index + 1);
}

/** A token of format 1 (base64url JSON "." HMAC), as the service issued them before format 2. */
function format1(overrides: Record<string, unknown> = {}, key = secret): string {
  const encoded = Buffer.from(
    JSON.stringify({
      ...aSlotTokenPayload({ orgId, scheduleId, hostUserId, formValuesHash: hash }),
      ...overrides,
    }),
  ).toString("base64url");
  return `${encoded}.${createHmac("sha256", key).update(encoded).digest("base64url")}`;
}

describe("slot tokens", () => {
  it("round-trips schedule, host, start, end, expiry and preview flag, and binds the form values", () => {
    const verified = verifySlotToken(token, secret, orgId, issuedAt);
    expect(verified).toMatchObject({
      scheduleId,
      hostUserId,
      start,
      end: new Date("2026-03-10T14:30:00.000Z"),
      expiresAt: new Date("2026-03-10T12:10:00.000Z"),
      preview: false,
    });
    expect(verified.issuedFor(hash)).toBe(true);
    expect(verified.issuedFor("b".repeat(64))).toBe(false);
    const preview = signSlotToken({ ...claims, preview: true, durationMinutes: 4095, hostUserId, start }, secret);
    expect(verifySlotToken(preview, secret, orgId, issuedAt)).toMatchObject({
      preview: true,
      end: new Date(start.getTime() + 4095 * 60_000),
    });
  });

  it("is opaque, unprefixed, URL-safe and 72 characters long", () => {
    expect(token).toMatch(/^[A-Za-z0-9_-]{72}$/);
    expect(SLOT_TOKEN_LENGTH).toBe(72);
  });

  it("signs a host's slots into the concatenation of their single tokens, deterministically", () => {
    const starts = [start.getTime(), start.getTime() + 30 * 60_000, start.getTime() + 400 * 24 * 3_600_000];
    const joined = slotTokenSigner(secret, claims).tokens(hostUserId, starts);
    expect(joined).toBe(
      starts.map((s) => signSlotToken({ ...claims, hostUserId, start: new Date(s) }, secret)).join(""),
    );
    expect(joined.slice(0, SLOT_TOKEN_LENGTH)).toBe(token);
  });

  it("expires exactly 10 minutes after issue", () => {
    expect(SLOT_TOKEN_TTL_MS).toBe(600_000);
    expect(verifySlotToken(token, secret, orgId, new Date(issuedAt.getTime() + SLOT_TOKEN_TTL_MS - 1)).hostUserId).toBe(
      hostUserId,
    );
    expect(
      problemName(() => verifySlotToken(token, secret, orgId, new Date(issuedAt.getTime() + SLOT_TOKEN_TTL_MS))),
    ).toBe("slot-token-expired");
  });

  it("rejects every single changed character", () => {
    for (let i = 0; i < token.length; i++) {
      expect(
        problemName(() => verifySlotToken(flipChar(token, i), secret, orgId, issuedAt)),
        `at ${i}`,
      ).toBe("slot-token-invalid");
    }
  });

  it("rejects a token of another org or another secret, even an expired one, as invalid", () => {
    const later = new Date("2027-01-01T00:00:00Z");
    for (const now of [issuedAt, later]) {
      expect(problemName(() => verifySlotToken(token, secret, newId("org_"), now))).toBe("slot-token-invalid");
      expect(problemName(() => verifySlotToken(token, "another-secret", orgId, now))).toBe("slot-token-invalid");
    }
  });

  it("rejects malformed tokens and unknown formats", () => {
    const unknownVersion = Buffer.from(token, "base64url");
    unknownVersion[0] = (3 << 5) | (unknownVersion[0]! & 0x1f);
    for (const bad of [
      "",
      ".",
      "abc",
      "a.b.c",
      token.slice(1),
      `${token}A`,
      `${token.slice(1)}!`,
      `${token.slice(0, 71)}=`,
      unknownVersion.toString("base64url"),
    ]) {
      expect(
        problemName(() => verifySlotToken(bad, secret, orgId, issuedAt)),
        JSON.stringify(bad),
      ).toBe("slot-token-invalid");
    }
    expect(problemName(() => verifySlotToken(undefined as unknown as string, secret, orgId, issuedAt))).toBe(
      "slot-token-invalid",
    );
  });

  it("refuses to sign what it cannot encode, and an empty secret", () => {
    const sign = (over: Partial<SlotTokenClaims>, host = hostUserId, at = start) =>
      signSlotToken({ ...claims, ...over, hostUserId: host, start: at }, secret);
    expect(() => sign({ durationMinutes: 4096 })).toThrow(RangeError);
    expect(() => sign({ durationMinutes: 0 })).toThrow(RangeError);
    expect(() => sign({ scheduleId: "sched_intro" })).toThrow(RangeError);
    expect(() => sign({}, "usr_ada")).toThrow(RangeError);
    expect(() => sign({}, hostUserId, new Date("2026-03-10T11:00:00Z"))).toThrow(RangeError);
    expect(() => signSlotToken({ ...claims, hostUserId, start }, "")).toThrow(RangeError);
    expect(() => verifySlotToken(token, "", orgId, issuedAt)).toThrow(RangeError);
  });
});

describe("slot tokens of format 1 (issued before the upgrade)", () => {
  it("are still honoured for their 10 minutes, with their form values", () => {
    const verified = verifySlotToken(format1({ preview: true }), secret, orgId, issuedAt);
    expect(verified).toMatchObject({
      scheduleId,
      hostUserId,
      start: new Date("2026-03-10T14:00:00.000Z"),
      end: new Date("2026-03-10T14:30:00.000Z"),
      expiresAt: new Date("2026-03-10T12:10:00.000Z"),
      preview: true,
    });
    expect(verified.issuedFor(hash)).toBe(true);
    expect(verified.issuedFor("b".repeat(64))).toBe(false);
    expect(problemName(() => verifySlotToken(format1(), secret, orgId, new Date("2026-03-10T12:10:00Z")))).toBe(
      "slot-token-expired",
    );
  });

  it("are invalid when tampered, of another org or secret, or not a payload", () => {
    const [body, sig] = format1().split(".") as [string, string];
    const forged = Buffer.from(
      JSON.stringify({ ...aSlotTokenPayload({ orgId, scheduleId, formValuesHash: hash }), hostUserId: newId("usr_") }),
    ).toString("base64url");
    const bodies = ["not json", "[]", "null", JSON.stringify({ ...aSlotTokenPayload(), preview: "false" })];
    for (const bad of [
      `${forged}.${sig}`,
      `${flipChar(body, 5)}.${sig}`,
      `${body}.${flipChar(sig, 0)}`,
      `${body}.${sig}A`,
      format1({}, "another-secret"),
      format1({ orgId: newId("org_") }),
      format1({ start: "soon" }),
      ...bodies.map((b) => {
        const encoded = Buffer.from(b).toString("base64url");
        return `${encoded}.${createHmac("sha256", secret).update(encoded).digest("base64url")}`;
      }),
      "a.",
      ".b",
      "ab!.cd",
    ]) {
      expect(
        problemName(() => verifySlotToken(bad, secret, orgId, issuedAt)),
        bad,
      ).toBe("slot-token-invalid");
    }
  });
});
