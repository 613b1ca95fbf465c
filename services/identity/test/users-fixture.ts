// The organizations and users every users-*.test.ts starts from: Acme with six users besides its
// administrator (one per role, invitation state and activity), and Other with one user.
import { UserService } from "@platform/contracts/identity";
import { afterAll, beforeAll, beforeEach } from "vitest";
import type { OrganizationRecord, UserRecord } from "../src/domain/model.js";
import { aUser, type CallerOptions, createTestIdentity, givenOrganization, type TestIdentity } from "./builders.js";

export const DAY_MS = 24 * 60 * 60 * 1000;
export const at = (iso: string) => new Date(iso);

export let t: TestIdentity;
export let acme: OrganizationRecord;
export let other: OrganizationRecord;
/** Acme's users by name, besides its administrator. */
export let u: Record<"admin" | "ae" | "sdr" | "pending" | "expired" | "gone", UserRecord>;
export let foreignUser: UserRecord;

export const users = (orgId = acme.id, opts: CallerOptions = {}) =>
  t.caller(UserService, orgId, { scopes: ["users:read", "users:write"], ...opts });

/** Registers the hooks that open the service once and reset the organizations before each test. */
export function useAcmeUsers(): void {
  beforeAll(async () => {
    t = await createTestIdentity();
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.reset();
    const now = t.clock.now().getTime();
    u = {
      admin: aUser("", {
        email: "blake.rivera@acme.example",
        firstName: "Blake",
        lastName: "Rivera",
        displayName: "Blake Rivera",
        role: "Admin",
        lastLoginAt: at("2026-01-10T00:00:00Z"),
        createdAt: at("2025-01-02T00:00:00Z"),
        updatedAt: at("2025-06-02T00:00:00Z"),
      }),
      ae: aUser("", {
        email: "casey.morgan@acme.example",
        firstName: "casey",
        lastName: "Morgan",
        displayName: "casey Morgan",
        title: "Account Executive",
        phoneNumber: "+12025550103",
        twoFactorEnabled: true,
        crmUserId: "005-ae",
        lastLoginAt: at("2026-01-12T00:00:00Z"),
        createdAt: at("2025-01-03T00:00:00Z"),
        updatedAt: at("2025-06-03T00:00:00Z"),
      }),
      sdr: aUser("", {
        email: "devon_100%@acme.example",
        firstName: null,
        lastName: "Lee",
        displayName: "Lee",
        lastLoginAt: null,
        createdAt: at("2025-01-04T00:00:00Z"),
        updatedAt: at("2025-06-04T00:00:00Z"),
      }),
      pending: aUser("", {
        email: "gray.patel@acme.example",
        firstName: "Gray",
        lastName: null,
        displayName: "Gray",
        invitationStatus: "pending",
        invitedAt: new Date(now - 2 * DAY_MS),
        createdAt: new Date(now - 2 * DAY_MS),
        updatedAt: new Date(now - 2 * DAY_MS),
      }),
      expired: aUser("", {
        email: "harper.quinn@acme.example",
        firstName: "Harper",
        lastName: "Quinn",
        displayName: "Harper Quinn",
        invitationStatus: "pending",
        invitedAt: new Date(now - 20 * DAY_MS),
        createdAt: new Date(now - 20 * DAY_MS),
        updatedAt: new Date(now - 20 * DAY_MS),
      }),
      gone: aUser("", {
        email: "indigo.brooks@acme.example",
        firstName: "Indigo",
        lastName: "Brooks",
        displayName: "Indigo Brooks",
        active: false,
        lastLoginAt: at("2025-07-31T00:00:00Z"),
        createdAt: at("2025-01-05T00:00:00Z"),
        updatedAt: at("2025-08-01T00:00:00Z"),
      }),
    };
    acme = await givenOrganization(t.db, { name: "Acme", seatTotal: 7 }, (orgId) =>
      Object.values(u).map((x) => Object.assign(x, { orgId })),
    );
    // The administrator: "Olive Owner", created 2025-06-01, never signed in.
    other = await givenOrganization(t.db, { name: "Other" }, (orgId) => {
      foreignUser = aUser(orgId, { email: "someone@other.example" });
      return [foreignUser];
    });
  });
}
