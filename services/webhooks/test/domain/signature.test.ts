import { Webhook } from "standardwebhooks";
import { describe, expect, it, vi } from "vitest";
import { newSecret, signatureHeaders } from "../../src/domain/signature.js";

const now = new Date();
const body = JSON.stringify({ id: "evt", type: "webhook.test", data: {} });

describe("signatures", () => {
  it("a new secret is whsec_ + base64 of 32 bytes", () => {
    const s = newSecret();
    expect(s).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(s.slice(6), "base64")).toHaveLength(32);
    expect(newSecret()).not.toBe(s);
  });

  it("standardwebhooks verifies the headers, and refuses another secret or a changed body", () => {
    const secret = newSecret();
    const headers = signatureHeaders(
      { secret, previousSecret: null, previousSecretExpiresAt: null },
      "evt_1",
      now,
      body,
    );
    expect(headers["webhook-signature"].split(" ")).toHaveLength(1);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow();
  });

  it("signs with both secrets during the grace period, only the new one after it", () => {
    const [secret, previousSecret] = [newSecret(), newSecret()];
    const during = signatureHeaders(
      { secret, previousSecret, previousSecretExpiresAt: new Date(now.getTime() + 1000) },
      "evt_2",
      now,
      body,
    );
    expect(during["webhook-signature"].split(" ")).toHaveLength(2);
    expect(new Webhook(secret).verify(body, during)).toBeTruthy();
    expect(new Webhook(previousSecret).verify(body, during)).toBeTruthy();
    const after = signatureHeaders({ secret, previousSecret, previousSecretExpiresAt: now }, "evt_2", now, body);
    expect(() => new Webhook(previousSecret).verify(body, after)).toThrow();
    expect(vi.isMockFunction(Date.now)).toBe(false);
  });
});
