// The identity data of the gateway's tests: organizations, users, tokens, partner grants.

import { create } from "@bufbuild/protobuf";
import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Organization, OrganizationSchema, type User, UserSchema } from "@platform/contracts/identity";
import { seededId } from "@platform/kit/ids";
import { ts } from "./common.js";

export const ORG = seededId("org_", "gw-test", "acme");
export const PARTNER_ORG = seededId("org_", "gw-test", "partner");
export const CHILD_ORG = seededId("org_", "gw-test", "child");
export const SECOND_CHILD_ORG = seededId("org_", "gw-test", "second-child");
export const REVOKED_CHILD_ORG = seededId("org_", "gw-test", "revoked-child");
export const STRANGER_ORG = seededId("org_", "gw-test", "stranger");
export const UNKNOWN_ORG = seededId("org_", "gw-test", "nobody");

/** Users of ORG (ADA, BEN, CAROL) and of CHILD_ORG (DAN). */
export const ADA = seededId("usr_", "gw-test", "ada");
export const BEN = seededId("usr_", "gw-test", "ben");
export const CAROL = seededId("usr_", "gw-test", "carol");
export const DAN = seededId("usr_", "gw-test", "dan");

export interface FakeToken {
  tokenId: string;
  orgId: string;
  scopes: string[];
  expireTime?: Date;
  revokeTime?: Date;
}

function organization(id: string, name: string, crm?: string): Organization {
  return create(OrganizationSchema, {
    id,
    name,
    primaryEmailDomain: "acme.example",
    emailDomains: ["acme.example", "acme.test"],
    administrator: { userId: seededId("usr_", "gw-test", `${name}-admin`), displayName: "Ada Admin" },
    industry: "Software",
    employeeCount: 120,
    sourceRefs: crm ? { crm: { orgId: crm } } : {},
    createTime: timestampFromDate(new Date("2025-03-01T09:30:00Z")),
    updateTime: timestampFromDate(new Date("2026-01-10T17:45:12.500Z")),
    version: 7n,
  });
}

export function seedOrganizations(): Map<string, Organization> {
  return new Map([
    [ORG, organization(ORG, "Acme", "0015g00000XyZ")],
    [CHILD_ORG, organization(CHILD_ORG, "Child")],
    [PARTNER_ORG, organization(PARTNER_ORG, "Partner")],
    [SECOND_CHILD_ORG, organization(SECOND_CHILD_ORG, "Beta")],
  ]);
}

export function seedUsers(): User[] {
  return [
    create(UserSchema, {
      id: ADA,
      orgId: ORG,
      email: "ada@acme.example",
      firstName: "Ada",
      lastName: "Admin",
      displayName: "Ada Admin",
      title: "CEO",
      department: "Management",
      phoneNumber: "+1 555 0100",
      profileImageUrl: "https://cdn.example/ada.png",
      role: "Admin",
      active: true,
      invitationStatus: "accepted",
      lastLoginTime: ts("2026-01-14T08:00:00Z"),
      twoFactorEnabled: true,
      crmUserId: "0055g00000AdA",
      createTime: ts("2025-03-01T09:30:00Z"),
      updateTime: ts("2025-12-01T10:00:00Z"),
      version: 3n,
    }),
    create(UserSchema, {
      id: BEN,
      orgId: ORG,
      email: "ben@acme.example",
      firstName: "Ben",
      displayName: "Ben",
      role: "User",
      active: true,
      invitationStatus: "pending",
      invitedBy: { userId: "", displayName: "Acme API" },
      inviteTime: ts("2026-01-10T12:00:00Z"),
      createTime: ts("2026-01-10T12:00:00Z"),
      updateTime: ts("2026-01-10T12:00:00Z"),
      version: 1n,
    }),
    create(UserSchema, {
      id: CAROL,
      orgId: ORG,
      email: "carol@acme.example",
      firstName: "Carol",
      lastName: "Former",
      displayName: "Carol Former",
      role: "User",
      active: false,
      invitationStatus: "accepted",
      invitedBy: { userId: ADA, displayName: "Ada Admin" },
      inviteTime: ts("2025-06-01T09:00:00Z"),
      createTime: ts("2025-06-01T09:00:00Z"),
      updateTime: ts("2025-11-01T09:00:00Z"),
      version: 5n,
    }),
    create(UserSchema, {
      id: DAN,
      orgId: CHILD_ORG,
      email: "dan@child.example",
      displayName: "Dan",
      role: "Admin",
      active: true,
      invitationStatus: "accepted",
      createTime: ts("2025-04-01T09:00:00Z"),
      updateTime: ts("2025-04-01T09:00:00Z"),
      version: 1n,
    }),
  ];
}

/** What a partner sees of each child beyond the organization itself. */
export interface ChildState {
  licenseTier: { slug: string; name: string };
  seats: { total: number; used: number };
  hasActiveIssues: boolean;
  relationshipCreateTime: Timestamp;
}

/** The children PARTNER_ORG manages, as listed to it (REVOKED_CHILD_ORG is no longer listed). */
export function seedChildren(): Map<string, ChildState> {
  return new Map<string, ChildState>([
    [
      CHILD_ORG,
      {
        licenseTier: { slug: "professional", name: "Professional" },
        seats: { total: 25, used: 20 },
        hasActiveIssues: false,
        relationshipCreateTime: ts("2025-05-01T00:00:00Z"),
      },
    ],
    [
      SECOND_CHILD_ORG,
      {
        licenseTier: { slug: "starter", name: "Starter" },
        seats: { total: 5, used: 5 },
        hasActiveIssues: true,
        relationshipCreateTime: ts("2025-09-01T00:00:00Z"),
      },
    ],
  ]);
}

/** parent|child → granted scopes; a revoked relationship is kept with revoked: true. */
export function seedGrants(): Map<string, { scopes: string[]; revoked: boolean }> {
  return new Map<string, { scopes: string[]; revoked: boolean }>([
    [
      `${PARTNER_ORG}|${CHILD_ORG}`,
      { scopes: ["organizations:read", "deals:read", "deals:write", "webhooks:read"], revoked: false },
    ],
    [`${PARTNER_ORG}|${REVOKED_CHILD_ORG}`, { scopes: ["organizations:read"], revoked: true }],
    [`${PARTNER_ORG}|${SECOND_CHILD_ORG}`, { scopes: ["users:read", "users:write"], revoked: false }],
  ]);
}
