import { FEATURE_KEYS, LICENSE_TIERS, ROLES } from "@platform/contracts/identity";
import { closedObject, nullable, orNull, sourceRefs, strictObject, timestamp, timestamps } from "./common.js";

/** sourceRefs of an organization or a user: the raw id of its CRM record, when the CRM is connected. */
const crmSourceRefs = (idField: string, description: string) =>
  sourceRefs(
    closedObject({ [idField]: { type: "string", description } }),
    "External references; `crm` only when the CRM is connected",
  );

const userRef = closedObject({
  userId: { type: "string", description: "usr_ id" },
  displayName: { type: "string" },
});

const seats = closedObject({
  total: { type: "integer", description: "Seat cap" },
  used: { type: "integer", description: "Active users plus pending invites" },
  available: { type: "integer", description: "total - used" },
});

const licenseTier = closedObject({
  slug: { type: "string", enum: [...LICENSE_TIERS] },
  name: { type: "string" },
});

export const organizationSchema = closedObject(
  {
    id: { type: "string", description: "org_ id" },
    name: { type: "string", maxLength: 200 },
    primaryEmailDomain: { type: "string", description: "One of emailDomains" },
    emailDomains: { type: "array", items: { type: "string" }, description: "Verified domains only" },
    administrator: { ...userRef, description: "Contractual owner (billing contact, signatory)" },
    industry: { type: "string" },
    employeeCount: { type: "integer", minimum: 1, maximum: 1_000_000 },
    logoUrl: { type: ["string", "null"], description: "Public URL; null when unset" },
    sourceRefs: crmSourceRefs("orgId", "Raw external org id"),
    ...timestamps,
  },
  { id: "Organization" },
);

export const entitlementsSchema = closedObject(
  {
    orgId: { type: "string", description: "org_ id" },
    features: closedObject(Object.fromEntries(FEATURE_KEYS.map((key) => [key, { type: "boolean" }])), {
      description: "Fixed key set; new keys are added over time, retired keys stay false for one major version",
    }),
    seats,
    licenseTier,
    asOf: { ...timestamp, description: "Time of the license snapshot" },
  },
  { id: "Entitlements" },
);

/** PATCH /organizations/{orgId}: any of the mutable fields; an empty object changes nothing. */
export const organizationPatchSchema = strictObject({
  name: { type: "string", minLength: 1, maxLength: 200 },
  primaryEmailDomain: { type: "string", description: "Must already be one of the verified emailDomains" },
  industry: { type: "string" },
  employeeCount: { type: "integer", minimum: 1, maximum: 1_000_000 },
});

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
  invitedBy: orNull(
    closedObject(
      { userId: nullable("string", "usr_ id"), displayName: { type: "string" } },
      {
        description:
          "Who sent the invitation; userId is null when an API token did; null when the user was not invited",
      },
    ),
  ),
  invitedAt: { ...nullable("string"), format: "date-time" },
  lastLoginAt: { ...nullable("string", "null when the user never signed in"), format: "date-time" },
  twoFactorEnabled: { type: "boolean" },
  sourceRefs: crmSourceRefs("userId", "Raw external user id"),
  ...timestamps,
} as const;

/** Members of the user's detail view that its list view leaves out. */
export const USER_DETAIL_ONLY = ["phoneNumber", "invitedBy", "invitedAt", "twoFactorEnabled", "sourceRefs"] as const;

const userListProperties = Object.fromEntries(
  Object.entries(userDetailProperties).filter(([name]) => !(USER_DETAIL_ONLY as readonly string[]).includes(name)),
);

export const userSchema = closedObject(userDetailProperties, { id: "User", description: "A user (detail view)" });

export const userListItemSchema = closedObject(userListProperties, {
  id: "UserListItem",
  description: `A user in a list: the detail view without ${USER_DETAIL_ONLY.join(", ")}`,
});

/** POST /users. Email and role values are judged by identity (invalid-email, invalid-role). */
export const userInviteSchema = strictObject(
  {
    email: { type: "string", format: "email", description: "Syntactically valid; stored lower-case" },
    role: { type: "string", description: ROLE },
    firstName: { type: "string" },
    lastName: { type: "string" },
    title: { type: "string" },
    department: { type: "string" },
  },
  { required: ["email", "role"] },
);

/** PATCH /users/{userId}: any of these; null clears a text field. */
export const userPatchSchema = strictObject({
  firstName: nullable("string", "null clears"),
  lastName: nullable("string", "null clears"),
  title: nullable("string", "null clears"),
  department: nullable("string", "null clears"),
  phoneNumber: nullable("string", "null clears"),
  role: { type: "string", description: ROLE },
  active: { type: "boolean", description: "false deactivates (soft); true reactivates with the role held before" },
});

export const managedOrganizationSchema = closedObject(
  {
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
  { id: "ManagedOrganization", description: "A child organization as its partner sees it" },
);
