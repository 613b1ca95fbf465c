export * from "./gen/platform/identity/v1/admin_pb.js";
export * from "./gen/platform/identity/v1/gateway_auth_pb.js";
export * from "./gen/platform/identity/v1/organization_pb.js";
export * from "./gen/platform/identity/v1/partner_pb.js";
export * from "./gen/platform/identity/v1/user_pb.js";

// Enumerations of the REST API that identity stores and the gateway documents: one list each.

/** The license tiers, cheapest first. */
export const LICENSE_TIERS = ["free", "starter", "professional", "enterprise"] as const;

/** The fixed feature keys of the entitlements, in the spec's order. */
export const FEATURE_KEYS = [
  "smartScheduling",
  "teamCalendarScheduling",
  "replyTracking",
  "emailBlast",
  "dealIntelApp",
  "meetingAi",
] as const;

/** A user's role in an organization. */
export const ROLES = ["User", "Admin", "Partner Admin"] as const;

/** The most key hashes one ResolveApiKeys call may carry (the gateway's batch size). */
export const RESOLVE_API_KEYS_MAX = 100;
