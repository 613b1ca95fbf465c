import { newId } from "@platform/kit/ids";
import { afterAll, describe, expect, it } from "vitest";
import { signingPool } from "../src/application/signing-pool.js";
import {
  SLOT_TOKEN_TAIL_BYTES,
  type SlotTokenClaims,
  slotTokenSigner,
  verifySlotToken,
} from "../src/domain/slot-token.js";

// The signing threads run the same signer as the event loop: their tails are byte for byte the
// loop's, and head + base64url(tail) is a token booking accepts.

const secret = "test-secret-0123456789";
const issuedAt = new Date("2026-01-15T12:00:00Z");
const claims: SlotTokenClaims = {
  orgId: newId("org_"),
  scheduleId: newId("sched_"),
  expiresAt: new Date(issuedAt.getTime() + 600_000),
  preview: false,
  durationMinutes: 30,
  formValuesHash: "f".repeat(64),
};
const hosts = [0, 700, 1].map((count, h) => ({
  userId: newId("usr_"),
  starts: Array.from({ length: count }, (_, i) => Date.UTC(2026, 0, 16, 8) + (i * 30 + h) * 60_000),
}));

describe("signingPool", () => {
  const pool = signingPool(2);
  afterAll(() => pool.close());

  it("signs in its threads exactly what the event loop signs", async () => {
    const { expiresAt, ...rest } = claims;
    const jobs = [hosts.slice(0, 2), hosts.slice(2)].map((share) =>
      pool.signTails({
        secret,
        claims: { ...rest, expiresAtMs: expiresAt.getTime() },
        hosts: share.map((h) => ({ userId: h.userId, starts: Float64Array.from(h.starts) })),
      }),
    );
    const tails = (await Promise.all(jobs)).flat();
    const signer = slotTokenSigner(secret, claims);
    hosts.forEach((h, i) => {
      const expected = new Uint8Array(h.starts.length * SLOT_TOKEN_TAIL_BYTES);
      signer.signTails(h.userId, h.starts, 0, h.starts.length, expected);
      expect(Buffer.from(tails[i]!).equals(Buffer.from(expected))).toBe(true);
    });
    const last = tails[1]!.subarray(699 * SLOT_TOKEN_TAIL_BYTES);
    const token = signer.head(hosts[1]!.userId) + Buffer.from(last).toString("base64url");
    expect(verifySlotToken(token, secret, claims.orgId, issuedAt)).toMatchObject({
      hostUserId: hosts[1]!.userId,
      start: new Date(hosts[1]!.starts[699]!),
    });
  });

  it("refuses work once closed, so availability signs on its own loop", async () => {
    const closed = signingPool(1);
    await closed.close();
    await expect(closed.signTails({ secret, claims: { ...claims, expiresAtMs: 0 }, hosts: [] })).rejects.toThrow(
      /no slot token signing thread/,
    );
    expect(closed.size).toBe(0);
  });

  it("fails a job whose thread exits before answering, rather than leaving it pending", async () => {
    const dying = signingPool(1);
    const { expiresAt, ...rest } = claims;
    const starts = Float64Array.from({ length: 200_000 }, (_, i) => Date.UTC(2026, 0, 16, 8) + i * 60_000);
    const job = dying.signTails({
      secret,
      claims: { ...rest, expiresAtMs: expiresAt.getTime() },
      hosts: [{ userId: hosts[1]!.userId, starts }],
    });
    await dying.close();
    await expect(job).rejects.toThrow(/exited/);
  });
});
