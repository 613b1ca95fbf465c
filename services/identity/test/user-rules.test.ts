import { keyset, pageLimit, params, toPosition } from "@platform/kit/keyset";
import { describe, expect, it } from "vitest";
import { emailProblem, normaliseEmail } from "../src/domain/email.js";
import { auditLimit, managedFilters, userFilters } from "../src/domain/listing.js";
import { applyOrganizationPatch, validateOrganizationPatch } from "../src/domain/organizations.js";
import { effectiveScopes } from "../src/domain/partners.js";
import {
  applyUserPatch,
  checkAdministratorRules,
  checkSeatAvailable,
  displayName,
  holdsSeat,
  patchedText,
} from "../src/domain/users.js";
import { anOrganization, aUser } from "./builders.js";

const problemName = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return (err as { problemName: string }).problemName;
  }
  throw new Error("expected a problem");
};

const NOW = new Date("2026-01-15T12:00:00Z");

describe("email addresses", () => {
  it.each([
    "a@b.co",
    "first.last@acme.example",
    "o'brien+sales@sub.acme-corp.example",
    "x_y=z{1}@xn--bcher-kva.example",
    `${"l".repeat(64)}@acme.example`,
    "user@123.example",
  ])("accepts %s", (address) => {
    expect(emailProblem(address)).toBeUndefined();
  });

  it.each([
    ["", "no @"],
    ["plain", "no @"],
    ["@acme.example", "nothing before"],
    ["a@", "no domain"],
    ["a@localhost", "no domain"],
    [".a@acme.example", "local part"],
    ["a.@acme.example", "local part"],
    ["a..b@acme.example", "local part"],
    ["a b@acme.example", "local part"],
    ['"quoted"@acme.example', "local part"],
    ["a@b@acme.example", "local part"],
    ["a@-acme.example", "invalid domain"],
    ["a@acme-.example", "invalid domain"],
    ["a@acme..example", "invalid domain"],
    ["a@acme_corp.example", "invalid domain"],
    ["a@[192.168.0.1]", "invalid domain"],
    ["a@192.168.0.1", "invalid domain"],
    ["ü@acme.example", "local part"],
    [`${"l".repeat(65)}@acme.example`, "longer than 64"],
    [`a@${"d".repeat(64)}.example`, "invalid domain"],
    [`a@${"abcdefghi.".repeat(25)}example`, "longer than 254"],
  ])("rejects %j (%s)", (address, why) => {
    expect(emailProblem(address)).toContain(why);
  });

  it("trims and lower-cases a valid address, and answers invalid-email otherwise", () => {
    expect(normaliseEmail("  Jane.Doe@ACME.Example\t")).toBe("jane.doe@acme.example");
    expect(problemName(() => normaliseEmail("jane"))).toBe("invalid-email");
  });
});

describe("organization patches", () => {
  const org = anOrganization({ emailDomains: ["acme.example", "Acme-Corp.example"], version: 4 });

  it("changes only present fields and names those whose value changed", () => {
    const patch = validateOrganizationPatch({ name: " Acme ", industry: org.industry, employeeCount: 10 });
    const { next, changedFields } = applyOrganizationPatch(org, patch, NOW);
    expect(next).toMatchObject({ name: "Acme", industry: org.industry, employeeCount: 10, version: 5, updatedAt: NOW });
    expect(changedFields).toEqual(["name", "employeeCount"]);
  });

  it("stores the verified spelling of the primary domain", () => {
    const { next } = applyOrganizationPatch(org, { primaryEmailDomain: "acme-corp.EXAMPLE" }, NOW);
    expect(next.primaryEmailDomain).toBe("Acme-Corp.example");
    expect(problemName(() => applyOrganizationPatch(org, { primaryEmailDomain: "acme.test" }, NOW))).toBe(
      "email-domain-not-verified",
    );
  });

  it("rejects a fractional employee count", () => {
    expect(problemName(() => validateOrganizationPatch({ employeeCount: 1.5 }))).toBe("invalid-field");
  });
});

describe("user rules", () => {
  const owner = aUser("org_1", { role: "Admin" });
  const org = { administratorUserId: owner.id };

  it("derives the display name from the names, else the email", () => {
    expect(displayName({ firstName: "Ada", lastName: "Lovelace", email: "a@x.example" })).toBe("Ada Lovelace");
    expect(displayName({ firstName: null, lastName: "Lovelace", email: "a@x.example" })).toBe("Lovelace");
    expect(displayName({ firstName: null, lastName: null, email: "a@x.example" })).toBe("a@x.example");
  });

  it("reads a patch: cleared fields become null, sent ones trimmed, empty text is no text", () => {
    expect(patchedText({ title: " CTO ", department: "", cleared: ["phone_number", "last_name"] })).toEqual({
      title: "CTO",
      department: null,
      phoneNumber: null,
      lastName: null,
    });
    expect(patchedText({ cleared: ["firstName"] })).toEqual({ firstName: null });
    expect(problemName(() => patchedText({ cleared: ["email"] }))).toBe("invalid-field");
    expect(problemName(() => patchedText({ cleared: ["constructor"] }))).toBe("invalid-field");
    expect(problemName(() => patchedText({ title: "x", cleared: ["title"] }))).toBe("invalid-field");
  });

  it("keeps the role on reactivation unless one is sent", () => {
    const gone = aUser("org_1", { role: "Admin", active: false, version: 3 });
    expect(applyUserPatch(gone, {}, undefined, true, NOW).next).toMatchObject({
      role: "Admin",
      active: true,
      version: 4,
    });
    expect(applyUserPatch(gone, {}, "User", true, NOW).changedFields).toEqual(["role", "active"]);
  });

  it("needs a transfer before deactivating the contractual administrator, checked first", () => {
    const after = { ...owner, active: false };
    expect(problemName(() => checkAdministratorRules(owner, after, org, 0))).toBe("administrator-transfer-required");
    expect(problemName(() => checkAdministratorRules(owner, after, org, 3))).toBe("administrator-transfer-required");
  });

  it("refuses only a change that takes away the last administrator", () => {
    const admin = aUser("org_1", { role: "Admin" });
    expect(problemName(() => checkAdministratorRules(admin, { ...admin, role: "User" }, org, 0))).toBe(
      "last-administrator",
    );
    expect(problemName(() => checkAdministratorRules(admin, { ...admin, active: false }, org, 0))).toBe(
      "last-administrator",
    );
    expect(() => checkAdministratorRules(admin, { ...admin, role: "User" }, org, 1)).not.toThrow();
    expect(() => checkAdministratorRules(admin, { ...admin, role: "Partner Admin" }, org, 0)).not.toThrow();
    const pending = aUser("org_1", { role: "Admin", invitationStatus: "pending", invitedAt: NOW });
    expect(() => checkAdministratorRules(pending, { ...pending, role: "User" }, org, 0)).not.toThrow();
  });

  it("counts seats of active users with an accepted or unexpired invitation", () => {
    expect(holdsSeat(aUser("org_1"), NOW)).toBe(true);
    expect(holdsSeat(aUser("org_1", { active: false }), NOW)).toBe(false);
    const old = new Date(NOW.getTime() - 15 * 24 * 60 * 60 * 1000);
    expect(holdsSeat(aUser("org_1", { invitationStatus: "pending", invitedAt: old }), NOW)).toBe(false);
    expect(() => checkSeatAvailable(3, 2)).not.toThrow();
    expect(problemName(() => checkSeatAvailable(3, 3))).toBe("seat-limit-exceeded");
  });
});

describe("listing", () => {
  it("reads the active filter: true by default, false, all", () => {
    const f = (active: string) => userFilters({ search: "", role: "", active });
    expect(f("").active).toBe(true);
    expect(f("false").active).toBe(false);
    expect(f("all").active).toBeUndefined();
    expect(problemName(() => f("TRUE"))).toBe("invalid-filter");
  });

  it("reads the managed-organization filters", () => {
    expect(managedFilters({ search: " ab ", industry: "Retail", licenseTier: "starter" })).toEqual({
      search: "ab",
      industry: "Retail",
      licenseTier: "starter",
    });
    expect(problemName(() => managedFilters({ search: "", industry: "", licenseTier: "free" }))).toBe("invalid-filter");
  });

  it("bounds page and audit sizes", () => {
    expect([pageLimit(0), pageLimit(7), pageLimit(500)]).toEqual([25, 7, 100]);
    expect([auditLimit(0), auditLimit(7), auditLimit(5000)]).toEqual([50, 7, 500]);
  });

  it("intersects the token's scopes with the grant in the spec's order", () => {
    expect(
      effectiveScopes(["users:read", "deals:read", "qna:read"], ["qna:read", "deals:read", "users:write"]),
    ).toEqual(["deals:read", "qna:read"]);
  });
});

describe("keyset", () => {
  const lastLogin = { expr: "u.last_login_at", type: "timestamptz", nullable: true } as const;

  it("continues after a value, with the NULLs still ahead, or among the NULLs by id", () => {
    const p = params();
    expect(keyset(lastLogin, "u.id", true, ["2026-01-01T00:00:00.000Z", "usr_b"], p)).toEqual({
      where: "((u.last_login_at, u.id) < ($1::timestamptz, $2) OR u.last_login_at IS NULL)",
      orderBy: "u.last_login_at DESC NULLS LAST, u.id DESC",
    });
    expect(keyset(lastLogin, "u.id", false, [null, "usr_b"], p).where).toBe("(u.last_login_at IS NULL AND u.id > $3)");
    expect(p.values).toEqual(["2026-01-01T00:00:00.000Z", "usr_b", "usr_b"]);
  });

  it("refuses positions that do not fit the sort key", () => {
    const email = { expr: "u.email", type: "text", nullable: false } as const;
    expect(toPosition(["a@b.example", "usr_1"], email)).toEqual(["a@b.example", "usr_1"]);
    expect(problemName(() => toPosition([null, "usr_1"], email))).toBe("invalid-cursor");
    expect(problemName(() => toPosition(["not a time", "usr_1"], lastLogin))).toBe("invalid-cursor");
    expect(problemName(() => toPosition([1], email))).toBe("invalid-cursor");
  });
});
