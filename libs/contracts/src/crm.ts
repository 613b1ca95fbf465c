export * from "./gen/platform/crm/v1/account_pb.js";
export * from "./gen/platform/crm/v1/activity_pb.js";
export * from "./gen/platform/crm/v1/admin_pb.js";
export * from "./gen/platform/crm/v1/contact_pb.js";
export * from "./gen/platform/crm/v1/references_pb.js";
export * from "./gen/platform/crm/v1/transcript_pb.js";

// Enumerations of the REST API that crm-data stores and the gateway documents: one list each.

/** The spec's recording-bot states. */
export const BOT_STATUSES = [
  "pending",
  "joining",
  "waiting-for-host",
  "recording",
  "paused",
  "done",
  "failed",
  "cancelled",
] as const;

/** The spec's neutral names of the video providers a bot joins. */
export const VIDEO_PROVIDERS = ["video_a", "video_b", "video_c"] as const;
