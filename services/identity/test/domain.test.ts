import { ALL_SCOPES, PARTNER_SCOPE } from "@platform/kit/scopes";
import { describe, expect, it } from "vitest";
import { normaliseFeatures, shapeEntitlements } from "../src/domain/entitlements.js";
import { checkPartnerPair, checkSingleParent } from "../src/domain/partners.js";
import { validateGrantedScopes, validateTokenScopes } from "../src/domain/scopes.js";
import { INVITATION_TTL_MS, invitationStatus, pendingInvitationCutoff, seats } from "../src/domain/seats.js";
import { tokenName, tokenState } from "../src/domain/tokens.js";
import { visibleOrgId } from "../src/domain/visibility.js";
import { anOrganization } from "./builders.js";

const problemName = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return (err as { problemName: string }).problemName;
  }
  throw new Error("expected a problem");
};

describe("token scopes", () => {
  const plain = { id: "org_plain", partnerAdmin: false };
  const partner = { id: "org_partner", partnerAdmin: true };

  it("keeps known scopes once, in the canonical order", () => {
    expect(validateTokenScopes(["users:read", "deals:read", "users:read"], plain)).toEqual([
      "deals:read",
      "users:read",
    ]);
    expect(validateTokenScopes([], plain)).toEqual([]);
  });

  it("rejects unknown scopes naming them", () => {
    expect(problemName(() => validateTokenScopes(["deals:read", "deals:admin"], plain))).toBe("invalid-field");
    expect(() => validateTokenScopes(["deals:admin"], plain)).toThrow(/'deals:admin'/);
  });

  it("issues partner:act-as-child only to partner-admin organizations", () => {
    expect(problemName(() => validateTokenScopes([PARTNER_SCOPE], plain))).toBe("invalid-field");
    expect(() => validateTokenScopes([PARTNER_SCOPE], plain)).toThrow(/partner-admin/);
    expect(validateTokenScopes([...ALL_SCOPES], partner)).toEqual([...ALL_SCOPES]);
  });

  it("never lets a child grant partner:act-as-child", () => {
    expect(validateGrantedScopes(["deals:read"])).toEqual(["deals:read"]);
    expect(problemName(() => validateGrantedScopes([PARTNER_SCOPE]))).toBe("invalid-field");
    expect(problemName(() => validateGrantedScopes(["nope"]))).toBe("invalid-field");
  });
});

describe("seats and invitations", () => {
  const now = new Date("2026-01-15T12:00:00Z");

  it("computes available as total minus used, never below zero", () => {
    expect(seats(10, 7)).toEqual({ total: 10, used: 7, available: 3 });
    expect(seats(5, 8)).toEqual({ total: 5, used: 8, available: 0 });
  });

  it("derives expired from a pending invitation older than 14 days", () => {
    const at = (ms: number) => new Date(now.getTime() - ms);
    expect(invitationStatus({ invitationStatus: "accepted", invitedAt: at(100 * INVITATION_TTL_MS) }, now)).toBe(
      "accepted",
    );
    expect(invitationStatus({ invitationStatus: "pending", invitedAt: at(INVITATION_TTL_MS) }, now)).toBe("pending");
    expect(invitationStatus({ invitationStatus: "pending", invitedAt: at(INVITATION_TTL_MS + 1) }, now)).toBe(
      "expired",
    );
    expect(pendingInvitationCutoff(now).toISOString()).toBe("2026-01-01T12:00:00.000Z");
  });
});

describe("entitlements", () => {
  it("exposes exactly the fixed feature keys, missing ones as false", () => {
    expect(normaliseFeatures({ smartScheduling: true, retiredKey: true })).toEqual({
      smartScheduling: true,
      teamCalendarScheduling: false,
      replyTracking: false,
      emailBlast: false,
      dealIntelApp: false,
      meetingAi: false,
    });
  });

  it("names the tier and counts seats", () => {
    const org = anOrganization({ licenseTier: "professional", seatTotal: 10 });
    const e = shapeEntitlements(org, 4);
    expect(e.licenseTier).toEqual({ slug: "professional", name: "Professional" });
    expect(e.seats).toEqual({ total: 10, used: 4, available: 6 });
    expect(e.asOf).toEqual(org.licenseAsOf);
  });
});

describe("organization visibility", () => {
  it("answers the caller's own org for an empty or equal id", () => {
    expect(visibleOrgId("", "org_a")).toBe("org_a");
    expect(visibleOrgId("org_a", "org_a")).toBe("org_a");
  });

  it("gives another org's id the not-found of an unknown one", () => {
    expect(problemName(() => visibleOrgId("org_0123456789abcdefghjkmnpq", "org_a"))).toBe("organization-not-found");
    expect(problemName(() => visibleOrgId("usr_0123456789abcdefghjkmnpq", "org_a"))).toBe("invalid-resource-id");
  });
});

describe("tokens and partners", () => {
  it("names tokens and bounds the name", () => {
    expect(tokenName("  ")).toBe("token");
    expect(tokenName(" ci ")).toBe("ci");
    expect(problemName(() => tokenName("x".repeat(201)))).toBe("invalid-field");
  });

  it("lets revocation win over expiry", () => {
    const now = new Date("2026-01-15T12:00:00Z");
    const past = new Date("2025-01-01T00:00:00Z");
    expect(tokenState({ expiresAt: null, revokedAt: null }, now)).toBe("active");
    expect(tokenState({ expiresAt: past, revokedAt: null }, now)).toBe("expired");
    expect(tokenState({ expiresAt: past, revokedAt: past }, now)).toBe("revoked");
  });

  it("requires a partner-admin parent, a different child and a single active parent", () => {
    const parent = anOrganization({ partnerAdmin: true });
    const child = anOrganization();
    expect(() => checkPartnerPair(parent, child)).not.toThrow();
    expect(problemName(() => checkPartnerPair(child, parent))).toBe("invalid-field");
    expect(problemName(() => checkPartnerPair(parent, parent))).toBe("invalid-field");
    expect(() => checkSingleParent(child.id, parent.id, undefined)).not.toThrow();
    expect(() => checkSingleParent(child.id, parent.id, parent.id)).not.toThrow();
    expect(problemName(() => checkSingleParent(child.id, parent.id, "org_other"))).toBe("invalid-field");
  });
});
