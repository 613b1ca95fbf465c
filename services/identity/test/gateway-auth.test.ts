import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { GatewayAuthService, RESOLVE_API_KEYS_MAX } from "@platform/contracts/identity";
import { hashApiKey } from "@platform/kit/api-keys";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { OrganizationRecord } from "../src/domain/model.js";
import { createTestIdentity, givenOrganization, problemOf, type TestIdentity } from "./builders.js";

let t: TestIdentity;
let acme: OrganizationRecord;
let partner: OrganizationRecord;

beforeAll(async () => {
  t = await createTestIdentity();
});
afterAll(() => t.close());
beforeEach(async () => {
  await t.reset();
  acme = await givenOrganization(t.db, { name: "Acme" });
  partner = await givenOrganization(t.db, { name: "Partner", partnerAdmin: true });
});

describe("ResolveApiKey", () => {
  it("finds the token behind a key hash", async () => {
    const { token, key } = await t.adminClient.createToken({ orgId: acme.id, scopes: ["deals:read", "users:read"] });
    const resolved = await t.gatewayClient.resolveApiKey({ keyHash: hashApiKey(key) });
    expect(resolved.tokenId).toBe(token?.id);
    expect(resolved.orgId).toBe(acme.id);
    expect(resolved.scopes).toEqual(["deals:read", "users:read"]);
    expect(resolved.expireTime).toBeUndefined();
    expect(resolved.revokeTime).toBeUndefined();
  });

  it("returns revoked and expired tokens with their times, for the gateway to judge", async () => {
    const expiresAt = new Date("2025-01-01T00:00:00Z");
    const expired = await t.adminClient.createToken({
      orgId: acme.id,
      scopes: [],
      expireTime: timestampFromDate(expiresAt),
    });
    const revoked = await t.adminClient.createToken({ orgId: acme.id, scopes: [] });
    await t.adminClient.revokeToken({ tokenId: revoked.token?.id ?? "" });

    const e = await t.gatewayClient.resolveApiKey({ keyHash: hashApiKey(expired.key) });
    expect(e.expireTime && timestampDate(e.expireTime)).toEqual(expiresAt);
    const r = await t.gatewayClient.resolveApiKey({ keyHash: hashApiKey(revoked.key) });
    expect(r.revokeTime && timestampDate(r.revokeTime)).toEqual(t.clock.now());
  });

  it("answers unknown-subscription for an unknown hash", async () => {
    expect(await problemOf(t.gatewayClient.resolveApiKey({ keyHash: hashApiKey("pk_live_nope") }))).toBe(
      "unknown-subscription",
    );
  });

  it("serves the gateway principal only, and only through the gateway (both key look-ups)", async () => {
    const { key } = await t.adminClient.createToken({ orgId: acme.id, scopes: [] });
    const keyHash = hashApiKey(key);
    const asIntegrator = t.apiClient(GatewayAuthService, {
      principal: "api",
      requestId: "req_1",
      orgId: acme.id,
      tokenId: "tok_1",
      scopes: [],
    });
    const anonymous = t.apiClient(GatewayAuthService, undefined);
    expect(await problemOf(asIntegrator.resolveApiKey({ keyHash }))).toBe("missing-trust-header");
    expect(await problemOf(anonymous.resolveApiKey({ keyHash }))).toBe("missing-trust-header");
    expect(await problemOf(asIntegrator.resolveApiKeys({ keyHashes: [keyHash] }))).toBe("missing-trust-header");
    expect(await problemOf(anonymous.resolveApiKeys({ keyHashes: [keyHash] }))).toBe("missing-trust-header");
  });
});

describe("ResolveApiKeys", () => {
  it("answers the tokens of the known hashes by the hash as sent, revoked and expired ones included", async () => {
    const live = await t.adminClient.createToken({ orgId: acme.id, scopes: ["deals:read"] });
    const expiresAt = new Date("2025-01-01T00:00:00Z");
    const expired = await t.adminClient.createToken({
      orgId: partner.id,
      scopes: [],
      expireTime: timestampFromDate(expiresAt),
    });
    const revoked = await t.adminClient.createToken({ orgId: acme.id, scopes: [] });
    await t.adminClient.revokeToken({ tokenId: revoked.token?.id ?? "" });
    const upper = hashApiKey(live.key).toUpperCase();
    const unknown = hashApiKey("pk_live_nope");

    const { tokens } = await t.gatewayClient.resolveApiKeys({
      keyHashes: [upper, hashApiKey(expired.key), hashApiKey(revoked.key), unknown],
    });

    expect(Object.keys(tokens).sort()).toEqual([upper, hashApiKey(expired.key), hashApiKey(revoked.key)].sort());
    expect(tokens[upper]).toMatchObject({ tokenId: live.token?.id, orgId: acme.id, scopes: ["deals:read"] });
    expect(tokens[upper]?.revokeTime).toBeUndefined();
    const e = tokens[hashApiKey(expired.key)];
    expect(e?.orgId).toBe(partner.id);
    expect(e?.expireTime && timestampDate(e.expireTime)).toEqual(expiresAt);
    const r = tokens[hashApiKey(revoked.key)];
    expect(r?.revokeTime && timestampDate(r.revokeTime)).toEqual(t.clock.now());
    expect(tokens[unknown]).toBeUndefined();
  });

  it("answers an empty call with no tokens, and more than RESOLVE_API_KEYS_MAX hashes with invalid-request", async () => {
    expect((await t.gatewayClient.resolveApiKeys({ keyHashes: [] })).tokens).toEqual({});
    const tooMany = Array.from({ length: RESOLVE_API_KEYS_MAX + 1 }, (_, i) => hashApiKey(`pk_live_${i}`));
    expect(await problemOf(t.gatewayClient.resolveApiKeys({ keyHashes: tooMany }))).toBe("invalid-request");
    const justEnough = tooMany.slice(1);
    expect((await t.gatewayClient.resolveApiKeys({ keyHashes: justEnough })).tokens).toEqual({});
  });
});

describe("ResolveDelegation", () => {
  it("returns the scopes an active child granted to its parent", async () => {
    await t.adminClient.setPartnerGrant({
      parentOrgId: partner.id,
      childOrgId: acme.id,
      grantedScopes: ["deals:read", "accounts:read"],
    });
    const { grantedScopes } = await t.gatewayClient.resolveDelegation({ parentOrgId: partner.id, childOrgId: acme.id });
    expect(grantedScopes).toEqual(["deals:read", "accounts:read"]);
  });

  it("gives one answer for unknown, revoked and not-a-child", async () => {
    const stranger = await givenOrganization(t.db, { name: "Stranger" });
    await t.adminClient.setPartnerGrant({ parentOrgId: partner.id, childOrgId: acme.id, grantedScopes: [] });
    await t.adminClient.revokePartnerGrant({ parentOrgId: partner.id, childOrgId: acme.id });
    const resolve = (parentOrgId: string, childOrgId: string) =>
      problemOf(t.gatewayClient.resolveDelegation({ parentOrgId, childOrgId }));
    expect(await resolve(partner.id, acme.id)).toBe("cross-org-delegation-forbidden");
    expect(await resolve(partner.id, stranger.id)).toBe("cross-org-delegation-forbidden");
    expect(await resolve(partner.id, "org_0000000000000000000000zz")).toBe("cross-org-delegation-forbidden");
    expect(await resolve(stranger.id, partner.id)).toBe("cross-org-delegation-forbidden");
  });
});
