// The members of the user views, as the spec lists them.

/** The list view of a user. */
export const LIST_FIELDS = [
  "id",
  "orgId",
  "email",
  "firstName",
  "lastName",
  "displayName",
  "title",
  "department",
  "profileImageUrl",
  "role",
  "active",
  "invitationStatus",
  "lastLoginAt",
  "createdAt",
  "updatedAt",
].sort();
/** The detail view: the list view and what only GET /users/{userId} shows. */
export const DETAIL_FIELDS = [
  ...LIST_FIELDS,
  "phoneNumber",
  "invitedBy",
  "invitedAt",
  "twoFactorEnabled",
  "sourceRefs",
].sort();
