import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { SLOT_TOKEN_TTL_MS, signSlotToken, slotTokenExpiresAt, verifySlotToken } from "../../src/domain/slot-token.js";
import { aSlotTokenPayload, problemName } from "./builders.js";

const secret = "test-secret-0123456789";
const issuedAt = new Date("2026-03-10T12:00:00.000Z");
const payload = aSlotTokenPayload({ expiresAt: slotTokenExpiresAt(issuedAt) });

function flipChar(s: string, index: number): string {
  const c = s[index]!;
  return s.slice(0, index) + (c === "A" ? "B" : "A") + s.slice(index + 1);
}

describe("slot tokens", () => {
  it("round-trips the payload", () => {
    const token = signSlotToken(payload, secret);
    expect(verifySlotToken(token, secret, issuedAt)).toEqual(payload);
    expect(verifySlotToken(signSlotToken({ ...payload, preview: true }, secret), secret, issuedAt).preview).toBe(true);
  });

  it("is opaque, unprefixed and URL-safe", () => {
    expect(signSlotToken(payload, secret)).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  it("is deterministic and ignores extra properties", () => {
    const reordered = JSON.parse(JSON.stringify({ ...payload, extra: "x" }));
    const shuffled = Object.fromEntries(Object.entries(reordered).reverse());
    expect(signSlotToken(shuffled as unknown as typeof payload, secret)).toBe(signSlotToken(payload, secret));
  });

  it("expires exactly 10 minutes after issue", () => {
    expect(SLOT_TOKEN_TTL_MS).toBe(600_000);
    expect(payload.expiresAt).toBe("2026-03-10T12:10:00.000Z");
    const token = signSlotToken(payload, secret);
    expect(verifySlotToken(token, secret, new Date(issuedAt.getTime() + SLOT_TOKEN_TTL_MS - 1))).toEqual(payload);
    expect(problemName(() => verifySlotToken(token, secret, new Date(issuedAt.getTime() + SLOT_TOKEN_TTL_MS)))).toBe(
      "slot-token-expired",
    );
    expect(problemName(() => verifySlotToken(token, secret, new Date("2026-03-11T00:00:00Z")))).toBe(
      "slot-token-expired",
    );
  });

  it("rejects a tampered payload", () => {
    const [body, sig] = signSlotToken(payload, secret).split(".") as [string, string];
    const forged = Buffer.from(JSON.stringify({ ...payload, hostUserId: "usr_mallory" })).toString("base64url");
    expect(problemName(() => verifySlotToken(`${forged}.${sig}`, secret, issuedAt))).toBe("slot-token-invalid");
    expect(problemName(() => verifySlotToken(`${flipChar(body, 5)}.${sig}`, secret, issuedAt))).toBe(
      "slot-token-invalid",
    );
  });

  it("rejects a tampered signature, including one of another length", () => {
    const [body, sig] = signSlotToken(payload, secret).split(".") as [string, string];
    expect(problemName(() => verifySlotToken(`${body}.${flipChar(sig, 0)}`, secret, issuedAt))).toBe(
      "slot-token-invalid",
    );
    expect(problemName(() => verifySlotToken(`${body}.${flipChar(sig, sig.length - 1)}`, secret, issuedAt))).toBe(
      "slot-token-invalid",
    );
    expect(problemName(() => verifySlotToken(`${body}.${sig}A`, secret, issuedAt))).toBe("slot-token-invalid");
    expect(problemName(() => verifySlotToken(`${body}.${sig.slice(1)}`, secret, issuedAt))).toBe("slot-token-invalid");
  });

  it("rejects a token signed with another secret, even an expired one, as invalid", () => {
    const token = signSlotToken(payload, "another-secret");
    expect(problemName(() => verifySlotToken(token, secret, issuedAt))).toBe("slot-token-invalid");
    expect(problemName(() => verifySlotToken(token, secret, new Date("2027-01-01T00:00:00Z")))).toBe(
      "slot-token-invalid",
    );
  });

  it("rejects malformed tokens", () => {
    for (const token of ["", ".", "abc", "a.b.c", "a.", ".b", "ab!.cd", "abc def.xyz", `${"x".repeat(10)}.%%`]) {
      expect(
        problemName(() => verifySlotToken(token, secret, issuedAt)),
        JSON.stringify(token),
      ).toBe("slot-token-invalid");
    }
    expect(problemName(() => verifySlotToken(undefined as unknown as string, secret, issuedAt))).toBe(
      "slot-token-invalid",
    );
  });

  it("rejects a correctly signed body that is not a payload", () => {
    const sign = (body: string) => {
      const encoded = Buffer.from(body).toString("base64url");
      return `${encoded}.${createHmac("sha256", secret).update(encoded).digest("base64url")}`;
    };
    for (const body of ["not json", "[]", "null", JSON.stringify({ ...payload, preview: "false" })]) {
      expect(
        problemName(() => verifySlotToken(sign(body), secret, issuedAt)),
        body,
      ).toBe("slot-token-invalid");
    }
    expect(
      problemName(() => verifySlotToken(sign(JSON.stringify({ ...payload, start: "soon" })), secret, issuedAt)),
    ).toBe("slot-token-invalid");
  });

  it("refuses an empty secret", () => {
    expect(() => signSlotToken(payload, "")).toThrow(RangeError);
    expect(() => verifySlotToken("a.b", "", issuedAt)).toThrow(RangeError);
  });
});
