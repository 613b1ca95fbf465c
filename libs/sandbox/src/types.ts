// The shapes identity's sandbox definitions are written in. They mirror identity's model
// types structurally (this library may not import a service); identity assigns the
// definitions into its own typed records when it seeds, so a definition its model no longer
// accepts fails identity's typecheck. Scheduling's shapes are shared through
// @platform/contracts/rest/schedule instead.

export type LicenseTierSlug = "free" | "starter" | "professional" | "enterprise";
export type FeatureSet = Record<
  "smartScheduling" | "teamCalendarScheduling" | "replyTracking" | "emailBlast" | "dealIntelApp" | "meetingAi",
  boolean
>;
export type Role = "User" | "Admin" | "Partner Admin";
