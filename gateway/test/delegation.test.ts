import { create, toJson } from "@bufbuild/protobuf";
import { PartnerGrantChangedSchema } from "@platform/contracts/events/identity";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import { InProcessBus } from "@platform/kit/in-process-bus";
import { toBusMessage } from "@platform/kit/outbox";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  API,
  buildTestGateway,
  CHILD_ORG,
  expectProblem,
  get,
  ORG,
  PARTNER_ORG,
  PARTNER_SCOPES,
  REVOKED_CHILD_ORG,
  STRANGER_ORG,
  type TestGateway,
  UNKNOWN_ORG,
  withoutRequestId,
} from "./harness.js";

const ME = `${API}/organizations/me`;
let gw: TestGateway;
let partnerKey: string;
const bus = new InProcessBus();

beforeEach(async () => {
  gw = await buildTestGateway({ bus });
  partnerKey = gw.identity.addToken({ orgId: PARTNER_ORG, scopes: PARTNER_SCOPES });
});
afterEach(async () => {
  await gw.app.close();
});
afterAll(async () => {
  await bus.close();
});

const actingOn = (org: string) => ({ "x-platform-acting-on": org });

describe("X-Platform-Acting-On", () => {
  it("acts on the child: its data, the signed context, Platform-Acting-On", async () => {
    const res = await get(gw.app, ME, partnerKey, actingOn(CHILD_ORG));
    expect(res.statusCode).toBe(200);
    expect(res.json().id).toBe(CHILD_ORG);
    expect(res.headers["platform-acting-on"]).toBe(CHILD_ORG);
    expect(gw.identity.contexts.at(-1)).toEqual({
      principal: "api",
      requestId: res.headers["x-request-id"],
      orgId: CHILD_ORG,
      parentOrgId: PARTNER_ORG,
      tokenId: gw.identity.tokenOf(partnerKey).tokenId,
      // Token scopes ∩ the child's grant.
      scopes: ["organizations:read", "deals:read", "deals:write"],
    });
    // The spec's injected org context names the org the request acts on.
    expect(gw.identity.orgIdHeaders.at(-1)).toBe(CHILD_ORG);
  });

  it("acts on the token's own org without the header", async () => {
    const res = await get(gw.app, ME, partnerKey);
    expect(res.json().id).toBe(PARTNER_ORG);
    expect(res.headers["platform-acting-on"]).toBeUndefined();
    expect(gw.identity.contexts.at(-1)?.parentOrgId).toBeUndefined();
    expect(gw.identity.orgIdHeaders.at(-1)).toBe(PARTNER_ORG);
  });

  it("answers 400 invalid-acting-on-org for an empty, malformed or wrongly prefixed value", async () => {
    for (const value of ["", "org_", "org_NOT-AN-ID", "usr_1yzefm0450baq05dn6dz18k6", `${CHILD_ORG}, ${CHILD_ORG}`]) {
      expectProblem(await get(gw.app, ME, partnerKey, actingOn(value)), "invalid-acting-on-org");
    }
  });

  it("answers 400 invalid-acting-on-org on the delegation list itself", async () => {
    const body = expectProblem(
      await get(gw.app, `${API}/partner/managed-organizations`, partnerKey, actingOn(CHILD_ORG)),
      "invalid-acting-on-org",
    );
    expect(body.detail).toMatch(/not allowed/);
  });

  it("answers 403 delegation-scope-required without partner:act-as-child", async () => {
    const key = gw.identity.addToken({ orgId: ORG, scopes: ["organizations:read"] });
    expectProblem(await get(gw.app, ME, key, actingOn(CHILD_ORG)), "delegation-scope-required");
  });

  it("answers the same 403 cross-org-delegation-forbidden for a non-child, an unknown and a revoked child", async () => {
    const bodies = [];
    for (const org of [STRANGER_ORG, UNKNOWN_ORG, REVOKED_CHILD_ORG]) {
      const res = await get(gw.app, ME, partnerKey, actingOn(org));
      bodies.push(withoutRequestId(expectProblem(res, "cross-org-delegation-forbidden")));
      expect(res.headers["platform-acting-on"]).toBeUndefined();
    }
    expect(bodies[1]).toEqual(bodies[0]);
    expect(bodies[2]).toEqual(bodies[0]);
    expect(JSON.stringify(bodies[0])).not.toContain("org_");
  });

  it("answers 403 delegation-scope-insufficient when the token has the scope but the child did not grant it", async () => {
    expectProblem(await get(gw.app, `${API}/users`, partnerKey, actingOn(CHILD_ORG)), "delegation-scope-insufficient", {
      requiredScope: "users:read",
      grantedScopes: ["organizations:read", "deals:read", "deals:write"],
    });
  });

  it("answers 403 insufficient-scope when the token itself lacks the scope, granted or not", async () => {
    expectProblem(
      await get(gw.app, `${API}/webhook-subscriptions`, partnerKey, actingOn(CHILD_ORG)),
      "insufficient-scope",
      { requiredScope: "webhooks:read" },
    );
  });

  it("lets a delegated request through the guard (here to a service without the RPC: 501, no Platform-Acting-On)", async () => {
    const res = await get(gw.app, `${API}/deals`, partnerKey, actingOn(CHILD_ORG));
    expectProblem(res, "not-implemented");
    expect(res.headers["platform-acting-on"]).toBeUndefined();
  });

  it("caches grants and forgets one when identity publishes its change", async () => {
    await get(gw.app, ME, partnerKey, actingOn(CHILD_ORG));
    await get(gw.app, ME, partnerKey, actingOn(CHILD_ORG));
    expect(gw.identity.calls.resolveDelegation).toBe(1);

    gw.identity.grants.set(`${PARTNER_ORG}|${CHILD_ORG}`, { scopes: ["organizations:read"], revoked: true });
    expect((await get(gw.app, ME, partnerKey, actingOn(CHILD_ORG))).statusCode).toBe(200);
    const data = create(PartnerGrantChangedSchema, {
      parentOrgId: PARTNER_ORG,
      childOrgId: CHILD_ORG,
      grantedScopes: [],
      revoked: true,
    });
    await bus.publish(TOPICS.identity, [
      toBusMessage(
        {
          id: "evt-grant",
          type: EVENT_TYPES.partnerGrantChanged,
          source: "identity",
          time: gw.clock.now().toISOString(),
          data: toJson(PartnerGrantChangedSchema, data),
        },
        PARTNER_ORG,
      ),
    ]);
    await bus.idle();
    expectProblem(await get(gw.app, ME, partnerKey, actingOn(CHILD_ORG)), "cross-org-delegation-forbidden");
  });

  it("caches refusals briefly, so a new grant starts working within seconds", async () => {
    expectProblem(await get(gw.app, ME, partnerKey, actingOn(STRANGER_ORG)), "cross-org-delegation-forbidden");
    gw.identity.grants.set(`${PARTNER_ORG}|${STRANGER_ORG}`, { scopes: ["organizations:read"], revoked: false });
    expectProblem(await get(gw.app, ME, partnerKey, actingOn(STRANGER_ORG)), "cross-org-delegation-forbidden");
    gw.clock.advance(5_001);
    const res = await get(gw.app, `${API}/organizations/me/entitlements`, partnerKey, actingOn(STRANGER_ORG));
    expect(res.json().orgId).toBe(STRANGER_ORG);
    expect(res.headers["platform-acting-on"]).toBe(STRANGER_ORG);
  });

  it("exposes the purge hook for grants", async () => {
    expect((await get(gw.app, ME, partnerKey, actingOn(CHILD_ORG))).statusCode).toBe(200);
    gw.identity.grants.delete(`${PARTNER_ORG}|${CHILD_ORG}`);
    gw.app.purge.delegation(PARTNER_ORG, CHILD_ORG);
    expectProblem(await get(gw.app, ME, partnerKey, actingOn(CHILD_ORG)), "cross-org-delegation-forbidden");
  });
});
