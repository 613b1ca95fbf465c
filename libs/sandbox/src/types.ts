// The shapes the sandbox definitions are written in. They mirror the owning services' model
// types structurally (this library may not import a service); each service assigns the
// definitions into its own typed records when it seeds, so a definition its model no longer
// accepts fails that service's typecheck.

export type LicenseTierSlug = "free" | "starter" | "professional" | "enterprise";
export type FeatureSet = Record<
  "smartScheduling" | "teamCalendarScheduling" | "replyTracking" | "emailBlast" | "dealIntelApp" | "meetingAi",
  boolean
>;
export type Role = "User" | "Admin" | "Partner Admin";

export type FormAnswer = string | number | boolean | string[];
export interface FormField {
  key: string;
  label: string;
  type: "select" | "multi-select" | "text" | "number" | "boolean";
  options: string[];
  required: boolean;
}
export interface WorkingHours {
  weekday: 1 | 2 | 3 | 4 | 5 | 6 | 7;
  /** Local "HH:MM". */
  start: string;
  end: string;
}
export interface BookingWindow {
  minAdvanceMinutes: number;
  maxAdvanceDays: number;
}
export type ScheduleStatus = "active" | "disabled" | "draft";
export interface LocationRecord {
  type: "video" | "phone" | "in-person" | "custom";
  provider: "video_a" | "video_b" | "video_c" | null;
  joinUrl: string | null;
  address: string | null;
}
export interface CampaignRecord {
  id: string | null;
  source: string | null;
  medium: string | null;
  campaign: string | null;
  term: string | null;
  content: string | null;
}
