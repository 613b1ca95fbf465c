import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { hashApiKey, isApiKeyShape } from "@platform/kit/api-keys";
import { EVENT_TYPES } from "@platform/kit/events";
import { ALL_SCOPES, PARTNER_SCOPE } from "@platform/kit/scopes";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { OrganizationRecord } from "../src/domain/model.js";
import { pgStore } from "../src/store/index.js";
import { createTestIdentity, givenOrganization, outboxRows, problemOf, type TestIdentity } from "./builders.js";

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

const tokenCount = async () =>
  (await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM identity.api_tokens"))[0]?.n;

describe("CreateToken", () => {
  it("returns the key once and stores only its hash, with a TokenCreated event in the same commit", async () => {
    const { token, key } = await t.adminClient.createToken({ orgId: acme.id, name: "ci", scopes: ["deals:read"] });
    expect(isApiKeyShape(key)).toBe(true);
    expect(token?.id).toMatch(/^tok_/);
    expect(token?.keyPreview).toBe(`${key.slice(0, 12)}…`);
    expect(token?.scopes).toEqual(["deals:read"]);
    expect(token?.expireTime).toBeUndefined();

    const [row] = await t.db.query<Record<string, unknown>>("SELECT * FROM identity.api_tokens WHERE id = $1", [
      token?.id,
    ]);
    expect(row?.key_hash).toBe(hashApiKey(key));
    expect(JSON.stringify(row)).not.toContain(key);

    expect(await outboxRows(t.db)).toEqual([
      {
        type: EVENT_TYPES.tokenCreated,
        key: acme.id,
        subject: token?.id,
        data: { tokenId: token?.id, orgId: acme.id, scopes: ["deals:read"] },
      },
    ]);
    expect(t.commits()).toBe(1);
  });

  it("defaults the name and accepts an expiry in the past", async () => {
    const past = new Date("2025-01-01T00:00:00Z");
    const { token } = await t.adminClient.createToken({
      orgId: acme.id,
      scopes: [],
      expireTime: timestampFromDate(past),
    });
    expect(token?.name).toBe("token");
    expect(token?.expireTime && timestampDate(token.expireTime)).toEqual(past);
  });

  it("rejects unknown organizations and invalid scopes, writing nothing", async () => {
    expect(await problemOf(t.adminClient.createToken({ orgId: "org_unknown", scopes: [] }))).toBe(
      "organization-not-found",
    );
    expect(await problemOf(t.adminClient.createToken({ orgId: acme.id, scopes: ["deals:delete"] }))).toBe(
      "invalid-field",
    );
    expect(await problemOf(t.adminClient.createToken({ orgId: acme.id, scopes: [PARTNER_SCOPE] }))).toBe(
      "invalid-field",
    );
    expect(await tokenCount()).toBe(0);
    expect(await outboxRows(t.db)).toEqual([]);
    expect(t.commits()).toBe(0);
  });

  it("issues partner:act-as-child to a partner-admin organization", async () => {
    const { token } = await t.adminClient.createToken({ orgId: partner.id, scopes: [...ALL_SCOPES] });
    expect(token?.scopes).toContain(PARTNER_SCOPE);
  });

  it("leaves neither the token nor the event when the outbox write fails", async () => {
    await t.db.exec("ALTER TABLE identity.outbox ADD CONSTRAINT reject_all CHECK (false) NOT VALID");
    expect(await problemOf(t.adminClient.createToken({ orgId: acme.id, scopes: [] }))).toBe("connect:Internal");
    await t.db.exec("ALTER TABLE identity.outbox DROP CONSTRAINT reject_all");
    expect(await tokenCount()).toBe(0);
    expect(await outboxRows(t.db)).toEqual([]);
  });

  it("needs the admin secret", async () => {
    expect(await problemOf(t.adminClientSending("not-the-admin-secret").listTokens({}))).toBe(
      "connect:Unauthenticated",
    );
  });
});

describe("ListTokens and RevokeToken", () => {
  it("lists newest first, optionally per organization", async () => {
    const a = await t.adminClient.createToken({ orgId: acme.id, name: "first", scopes: [] });
    t.clock.advance(1000);
    const b = await t.adminClient.createToken({ orgId: acme.id, name: "second", scopes: [] });
    t.clock.advance(1000);
    await t.adminClient.createToken({ orgId: partner.id, name: "other", scopes: [] });

    const all = await t.adminClient.listTokens({});
    expect(all.tokens.map((x) => x.name)).toEqual(["other", "second", "first"]);
    const own = await t.adminClient.listTokens({ orgId: acme.id });
    expect(own.tokens.map((x) => x.id)).toEqual([b.token?.id, a.token?.id]);
  });

  it("revokes once: a repeat keeps the first time and publishes nothing new", async () => {
    const { token, key } = await t.adminClient.createToken({ orgId: acme.id, scopes: [] });
    const revokedAt = t.clock.now();
    const first = await t.adminClient.revokeToken({ tokenId: token?.id ?? "" });
    expect(first.token?.revokeTime && timestampDate(first.token.revokeTime)).toEqual(revokedAt);

    t.clock.advance(60_000);
    const again = await t.adminClient.revokeToken({ tokenId: token?.id ?? "" });
    expect(again.token?.revokeTime && timestampDate(again.token.revokeTime)).toEqual(revokedAt);

    const revokedEvents = (await outboxRows(t.db)).filter((e) => e.type === EVENT_TYPES.tokenRevoked);
    expect(revokedEvents).toEqual([
      {
        type: EVENT_TYPES.tokenRevoked,
        key: acme.id,
        subject: token?.id,
        data: { tokenId: token?.id, orgId: acme.id, keyHash: hashApiKey(key), revokeTime: "2026-01-15T12:00:00Z" },
      },
    ]);
  });

  it("answers not-found for an unknown token", async () => {
    expect(await problemOf(t.adminClient.revokeToken({ tokenId: "tok_nope" }))).toBe("not-found");
  });
});

describe("organizations and partner grants", () => {
  it("lists organizations by name with their active parent", async () => {
    await t.adminClient.setPartnerGrant({
      parentOrgId: partner.id,
      childOrgId: acme.id,
      grantedScopes: ["deals:read"],
    });
    const { organizations } = await t.adminClient.listOrganizations({});
    expect(organizations.map((o) => [o.name, o.partnerAdmin, o.parentOrgId])).toEqual([
      ["Acme", false, partner.id],
      ["Partner", true, ""],
    ]);
  });

  it("sets, updates, revokes and re-grants a relationship, announcing each change", async () => {
    const set = await t.adminClient.setPartnerGrant({
      parentOrgId: partner.id,
      childOrgId: acme.id,
      grantedScopes: ["users:read", "deals:read"],
    });
    expect(set.relationship?.grantedScopes).toEqual(["deals:read", "users:read"]);
    t.clock.advance(1000);
    const updated = await t.adminClient.setPartnerGrant({
      parentOrgId: partner.id,
      childOrgId: acme.id,
      grantedScopes: ["deals:read"],
    });
    expect(updated.relationship?.createTime).toEqual(set.relationship?.createTime);
    const revoked = await t.adminClient.revokePartnerGrant({ parentOrgId: partner.id, childOrgId: acme.id });
    expect(revoked.relationship?.revokeTime).toBeDefined();
    await t.adminClient.revokePartnerGrant({ parentOrgId: partner.id, childOrgId: acme.id });

    t.clock.advance(1000);
    const regranted = await t.adminClient.setPartnerGrant({
      parentOrgId: partner.id,
      childOrgId: acme.id,
      grantedScopes: [],
    });
    expect(regranted.relationship?.revokeTime).toBeUndefined();
    expect(regranted.relationship?.createTime).not.toEqual(set.relationship?.createTime);

    const events = (await outboxRows(t.db)).map((e) => e.data);
    expect(events).toEqual([
      { parentOrgId: partner.id, childOrgId: acme.id, grantedScopes: ["deals:read", "users:read"] },
      { parentOrgId: partner.id, childOrgId: acme.id, grantedScopes: ["deals:read"] },
      { parentOrgId: partner.id, childOrgId: acme.id, revoked: true },
      { parentOrgId: partner.id, childOrgId: acme.id },
    ]);
  });

  it("keeps one active parent per child under concurrent grants, through the database index", async () => {
    const other = await givenOrganization(t.db, { name: "Other partner", partnerAdmin: true });
    const store = pgStore(t.db);
    await store.tx((w) => w.upsertRelationship(partner.id, acme.id, [], t.clock.now()));
    const second = store.tx((w) => w.upsertRelationship(other.id, acme.id, [], t.clock.now()));
    await expect(second).rejects.toMatchObject({ problemName: "invalid-field" });
  });

  it("refuses a parent that is not partner-admin, bad grants, unknown orgs and a second parent", async () => {
    const other = await givenOrganization(t.db, { name: "Other partner", partnerAdmin: true });
    const grant = (parentOrgId: string, childOrgId: string, grantedScopes: string[] = []) =>
      problemOf(t.adminClient.setPartnerGrant({ parentOrgId, childOrgId, grantedScopes }));
    expect(await grant(acme.id, partner.id)).toBe("invalid-field");
    expect(await grant(partner.id, acme.id, ["deals:read", "bogus"])).toBe("invalid-field");
    expect(await grant(partner.id, acme.id, [PARTNER_SCOPE])).toBe("invalid-field");
    expect(await grant(partner.id, "org_missing")).toBe("organization-not-found");
    await t.adminClient.setPartnerGrant({ parentOrgId: partner.id, childOrgId: acme.id, grantedScopes: [] });
    expect(await grant(other.id, acme.id)).toBe("invalid-field");
    expect(await problemOf(t.adminClient.revokePartnerGrant({ parentOrgId: other.id, childOrgId: acme.id }))).toBe(
      "not-found",
    );
  });
});
