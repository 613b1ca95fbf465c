import { problem } from "@platform/kit/problems";
import { optionalText } from "./fields.js";
import { type OrganizationRecord, ROLES, type Role, type UserRecord } from "./model.js";
import { invitationStatus } from "./seats.js";

/** A role the organization may hold: one of the three (400 invalid-role), Partner Admin only on partner-admin orgs. */
export function parseRole(raw: string, org: Pick<OrganizationRecord, "id" | "partnerAdmin">): Role {
  if (!(ROLES as readonly string[]).includes(raw)) {
    throw problem("invalid-role", `Role '${raw}' is not one of: ${ROLES.join(", ")}.`);
  }
  const role = raw as Role;
  if (role === "Partner Admin" && !org.partnerAdmin) {
    throw problem(
      "invalid-role",
      `Role 'Partner Admin' exists only on partner-admin organizations; ${org.id} is not one.`,
    );
  }
  return role;
}

/** "First Last", either alone, or the email when the user has no name. */
export function displayName(u: Pick<UserRecord, "firstName" | "lastName" | "email">): string {
  return [u.firstName, u.lastName].filter(Boolean).join(" ").trim() || u.email;
}

/** Holds a seat: active, and the invitation accepted or still pending (not expired) at `now`. */
export function holdsSeat(u: Pick<UserRecord, "active" | "invitationStatus" | "invitedAt">, now: Date): boolean {
  return u.active && invitationStatus(u, now) !== "expired";
}

/** An administrator keeps the organization manageable: active, accepted, Admin or Partner Admin. */
function isAdministrator(u: Pick<UserRecord, "active" | "invitationStatus" | "role">): boolean {
  return u.active && u.invitationStatus === "accepted" && u.role !== "User";
}

/** 403 seat-limit-exceeded unless a seat is free; `used` counts the seat holders without the newcomer. */
export function checkSeatAvailable(seatTotal: number, used: number): void {
  if (used >= seatTotal) {
    throw problem("seat-limit-exceeded", `All ${seatTotal} seats of the organization are in use.`, {
      seatLimit: seatTotal,
      remainingSeats: Math.max(0, seatTotal - used),
    });
  }
}

/** What POST /users asks for, already validated. */
export interface Invitation {
  email: string;
  role: Role;
  firstName: string | null;
  lastName: string | null;
  title: string | null;
  department: string | null;
}

/** The optional profile fields of an invitation: trimmed, empty as none (400 invalid-field when too long). */
export function invitationProfile(req: {
  firstName?: string | undefined;
  lastName?: string | undefined;
  title?: string | undefined;
  department?: string | undefined;
}): Pick<Invitation, "firstName" | "lastName" | "title" | "department"> {
  const text = (v: string | undefined, field: string) => (v === undefined ? null : optionalText(v, field));
  return {
    firstName: text(req.firstName, "firstName"),
    lastName: text(req.lastName, "lastName"),
    title: text(req.title, "title"),
    department: text(req.department, "department"),
  };
}

/** "<Org name> (API)": who invites when an integrator does; there is no authenticated user. */
export function apiInviterName(org: Pick<OrganizationRecord, "name">): string {
  return `${org.name} (API)`;
}

/** What an invitation sets on the user: pending, active, never signed in, invited by the API. */
function invitationFields(inv: Invitation, org: Pick<OrganizationRecord, "name">, now: Date) {
  return {
    ...inv,
    displayName: displayName(inv),
    active: true,
    invitationStatus: "pending" as const,
    invitedAt: now,
    invitedByUserId: null,
    invitedByName: apiInviterName(org),
    lastLoginAt: null,
    updatedAt: now,
  };
}

/** A new user from an invitation. */
export function invitedUser(
  inv: Invitation,
  org: Pick<OrganizationRecord, "id" | "name">,
  id: string,
  now: Date,
): UserRecord {
  return {
    ...invitationFields(inv, org, now),
    id,
    orgId: org.id,
    phoneNumber: null,
    profileImageUrl: null,
    twoFactorEnabled: false,
    crmUserId: null,
    version: 1,
    createdAt: now,
  };
}

/**
 * Inviting an email whose invitation expired renews that user (same id, new version)
 * rather than adding a second user for one address.
 */
export function renewedInvitation(
  expired: UserRecord,
  inv: Invitation,
  org: Pick<OrganizationRecord, "name">,
  now: Date,
): UserRecord {
  return { ...expired, ...invitationFields(inv, org, now), version: expired.version + 1 };
}

/** Fields a PATCH may send as null. */
export const CLEARABLE_FIELDS = ["firstName", "lastName", "title", "department", "phoneNumber"] as const;
type Clearable = (typeof CLEARABLE_FIELDS)[number];

/** The UserPatch of the contract: present fields change, `cleared` ones (proto names) become null. */
export interface UserPatch {
  firstName?: string | undefined;
  lastName?: string | undefined;
  title?: string | undefined;
  department?: string | undefined;
  phoneNumber?: string | undefined;
  role?: string | undefined;
  active?: boolean | undefined;
  cleared: readonly string[];
}

// `cleared` holds the contract's field names; the API's camelCase names mean the same.
const CLEARED_NAMES: Record<string, Clearable> = {
  first_name: "firstName",
  last_name: "lastName",
  title: "title",
  department: "department",
  phone_number: "phoneNumber",
  ...Object.fromEntries(CLEARABLE_FIELDS.map((f) => [f, f])),
};

/** The new text values of a patch: sent ones validated, cleared ones null (400 invalid-field otherwise). */
export function patchedText(patch: UserPatch): Partial<Record<Clearable, string | null>> {
  const out: Partial<Record<Clearable, string | null>> = {};
  for (const name of patch.cleared) {
    const field = Object.hasOwn(CLEARED_NAMES, name) ? CLEARED_NAMES[name] : undefined;
    if (!field) throw problem("invalid-field", `${name} cannot be null.`, { field: name });
    if (patch[field] !== undefined) {
      throw problem("invalid-field", `${field} is both set and cleared.`, { field });
    }
    out[field] = null;
  }
  for (const field of CLEARABLE_FIELDS) {
    const value = patch[field];
    if (value !== undefined) out[field] = optionalText(value, field);
  }
  return out;
}

const TRACKED_FIELDS = [
  "firstName",
  "lastName",
  "displayName",
  "title",
  "department",
  "phoneNumber",
  "role",
  "active",
] as const;

/**
 * The user after a patch at `now`: a new version even when nothing differs (a PATCH is a
 * mutation). Reactivation keeps the role held at deactivation; only a sent role changes it.
 * Returns the API names of the fields whose value changed.
 */
export function applyUserPatch(
  user: UserRecord,
  text: Partial<Record<Clearable, string | null>>,
  role: Role | undefined,
  active: boolean | undefined,
  now: Date,
): { next: UserRecord; changedFields: string[] } {
  const named = { ...user, ...text };
  const next: UserRecord = {
    ...named,
    displayName: displayName(named),
    role: role ?? user.role,
    active: active ?? user.active,
    version: user.version + 1,
    updatedAt: now,
  };
  return { next, changedFields: TRACKED_FIELDS.filter((f) => next[f] !== user[f]) };
}

/**
 * The post-change rules of a user change, on the state under the organization's lock:
 * deactivating the contractual administrator needs a transfer first (422
 * administrator-transfer-required); a change that takes away the last administrator is
 * 422 last-administrator. `otherAdministrators` counts the administrators besides this user.
 */
export function checkAdministratorRules(
  before: UserRecord,
  after: UserRecord,
  org: Pick<OrganizationRecord, "administratorUserId">,
  otherAdministrators: number,
): void {
  if (before.active && !after.active && before.id === org.administratorUserId) {
    throw problem(
      "administrator-transfer-required",
      `${before.id} is the organization's contractual administrator; transfer that role before deactivating the user.`,
    );
  }
  if (isAdministrator(before) && !isAdministrator(after) && otherAdministrators === 0) {
    throw problem(
      "last-administrator",
      `${before.id} is the organization's last administrator; make another user Admin first.`,
    );
  }
}
