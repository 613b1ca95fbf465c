import { FEATURE_KEYS, LICENSE_TIERS, ROLES } from "@platform/contracts/identity";
import { nullable, sourceRefs, timestamp } from "./common.js";

/** sourceRefs of an organization or a user: the raw id of its CRM record, when the CRM is connected. */
const crmSourceRefs = (idField: string, description: string) =>
  sourceRefs(
    {
      type: "object",
      required: [idField],
      properties: { [idField]: { type: "string", description } },
      additionalProperties: false,
    },
    "External references; `crm` only when the CRM is connected",
  );

const userRef = {
  type: "object",
  required: ["userId", "displayName"],
  properties: { userId: { type: "string", description: "usr_ id" }, displayName: { type: "string" } },
  additionalProperties: false,
} as const;

const seats = {
  type: "object",
  required: ["total", "used", "available"],
  properties: {
    total: { type: "integer", description: "Seat cap" },
    used: { type: "integer", description: "Active users plus pending invites" },
    available: { type: "integer", description: "total - used" },
  },
  additionalProperties: false,
} as const;

const licenseTier = {
  type: "object",
  required: ["slug", "name"],
  properties: {
    slug: { type: "string", enum: [...LICENSE_TIERS] },
    name: { type: "string" },
  },
  additionalProperties: false,
} as const;

export const organizationSchema = {
  $id: "Organization",
  type: "object",
  required: [
    "id",
    "name",
    "primaryEmailDomain",
    "emailDomains",
    "administrator",
    "industry",
    "employeeCount",
    "logoUrl",
    "sourceRefs",
    "createdAt",
    "updatedAt",
  ],
  properties: {
    id: { type: "string", description: "org_ id" },
    name: { type: "string", maxLength: 200 },
    primaryEmailDomain: { type: "string", description: "One of emailDomains" },
    emailDomains: { type: "array", items: { type: "string" }, description: "Verified domains only" },
    administrator: { ...userRef, description: "Contractual owner (billing contact, signatory)" },
    industry: { type: "string" },
    employeeCount: { type: "integer", minimum: 1, maximum: 1_000_000 },
    logoUrl: { type: ["string", "null"], description: "Public URL; null when unset" },
    sourceRefs: crmSourceRefs("orgId", "Raw external org id"),
    createdAt: timestamp,
    updatedAt: timestamp,
  },
  additionalProperties: false,
} as const;

export const entitlementsSchema = {
  $id: "Entitlements",
  type: "object",
  required: ["orgId", "features", "seats", "licenseTier", "asOf"],
  properties: {
    orgId: { type: "string", description: "org_ id" },
    features: {
      type: "object",
      description: "Fixed key set; new keys are added over time, retired keys stay false for one major version",
      required: [...FEATURE_KEYS],
      properties: Object.fromEntries(FEATURE_KEYS.map((key) => [key, { type: "boolean" }])),
      additionalProperties: false,
    },
    seats,
    licenseTier,
    asOf: { ...timestamp, description: "Time of the license snapshot" },
  },
  additionalProperties: false,
} as const;

/** PATCH /organizations/{orgId}: any of the mutable fields; an empty object changes nothing. */
export const organizationPatchSchema = {
  type: "object",
  properties: {
    name: { type: "string", minLength: 1, maxLength: 200 },
    primaryEmailDomain: { type: "string", description: "Must already be one of the verified emailDomains" },
    industry: { type: "string" },
    employeeCount: { type: "integer", minimum: 1, maximum: 1_000_000 },
  },
  additionalProperties: false,
} as const;

const ROLE = "User, Admin or Partner Admin (Partner Admin only on partner-admin organizations)";

const userDetailProperties = {
  id: { type: "string", description: "usr_ id" },
  orgId: { type: "string", description: "org_ id" },
  email: { type: "string", format: "email", description: "Lower-case; not mutable through the API" },
  firstName: nullable("string"),
  lastName: nullable("string"),
  displayName: { type: "string" },
  title: nullable("string"),
  department: nullable("string"),
  phoneNumber: nullable("string"),
  profileImageUrl: nullable("string", "Public URL; null when none"),
  role: { type: "string", enum: [...ROLES] },
  active: { type: "boolean", description: "false when deactivated" },
  invitationStatus: { type: "string", enum: ["accepted", "pending", "expired"] },
  invitedBy: {
    type: ["object", "null"],
    description: "Who sent the invitation; userId is null when an API token did; null when the user was not invited",
    required: ["userId", "displayName"],
    properties: { userId: nullable("string", "usr_ id"), displayName: { type: "string" } },
    additionalProperties: false,
  },
  invitedAt: { ...nullable("string"), format: "date-time" },
  lastLoginAt: { ...nullable("string", "null when the user never signed in"), format: "date-time" },
  twoFactorEnabled: { type: "boolean" },
  sourceRefs: crmSourceRefs("userId", "Raw external user id"),
  createdAt: timestamp,
  updatedAt: timestamp,
} as const;

/** Members of the user's detail view that its list view leaves out. */
export const USER_DETAIL_ONLY = ["phoneNumber", "invitedBy", "invitedAt", "twoFactorEnabled", "sourceRefs"] as const;

const userListProperties = Object.fromEntries(
  Object.entries(userDetailProperties).filter(([name]) => !(USER_DETAIL_ONLY as readonly string[]).includes(name)),
);

export const userSchema = {
  $id: "User",
  type: "object",
  description: "A user (detail view)",
  required: Object.keys(userDetailProperties),
  properties: userDetailProperties,
  additionalProperties: false,
} as const;

export const userListItemSchema = {
  $id: "UserListItem",
  type: "object",
  description: `A user in a list: the detail view without ${USER_DETAIL_ONLY.join(", ")}`,
  required: Object.keys(userListProperties),
  properties: userListProperties,
  additionalProperties: false,
} as const;

/** POST /users. Email and role values are judged by identity (invalid-email, invalid-role). */
export const userInviteSchema = {
  type: "object",
  required: ["email", "role"],
  properties: {
    email: { type: "string", format: "email", description: "Syntactically valid; stored lower-case" },
    role: { type: "string", description: ROLE },
    firstName: { type: "string" },
    lastName: { type: "string" },
    title: { type: "string" },
    department: { type: "string" },
  },
  additionalProperties: false,
} as const;

/** PATCH /users/{userId}: any of these; null clears a text field. */
export const userPatchSchema = {
  type: "object",
  properties: {
    firstName: nullable("string", "null clears"),
    lastName: nullable("string", "null clears"),
    title: nullable("string", "null clears"),
    department: nullable("string", "null clears"),
    phoneNumber: nullable("string", "null clears"),
    role: { type: "string", description: ROLE },
    active: { type: "boolean", description: "false deactivates (soft); true reactivates with the role held before" },
  },
  additionalProperties: false,
} as const;

export const managedOrganizationSchema = {
  $id: "ManagedOrganization",
  type: "object",
  description: "A child organization as its partner sees it",
  required: [
    "id",
    "name",
    "primaryEmailDomain",
    "industry",
    "licenseTier",
    "seats",
    "grantedScopes",
    "hasActiveIssues",
    "relationshipCreatedAt",
    "updatedAt",
  ],
  properties: {
    id: { type: "string", description: "org_ id" },
    name: { type: "string" },
    primaryEmailDomain: { type: "string" },
    industry: { type: "string" },
    licenseTier,
    seats,
    grantedScopes: {
      type: "array",
      items: { type: "string" },
      description: "The token's scopes intersected with the child's grant: what the token can exercise now",
    },
    hasActiveIssues: { type: "boolean", description: "Expired trial, failed payment, security incident or similar" },
    relationshipCreatedAt: timestamp,
    updatedAt: timestamp,
  },
  additionalProperties: false,
} as const;
