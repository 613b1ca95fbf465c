import { problem } from "@platform/kit/problems";

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

export type BotState = (typeof BOT_STATUSES)[number];

/** The spec's neutral names of the video providers a bot joins. */
export const VIDEO_PROVIDERS = ["video_a", "video_b", "video_c"] as const;

export function botProvider(provider: string): (typeof VIDEO_PROVIDERS)[number] {
  if (!(VIDEO_PROVIDERS as readonly string[]).includes(provider)) {
    throw problem("invalid-field", `provider must be one of ${VIDEO_PROVIDERS.join(", ")}.`, { field: "provider" });
  }
  return provider as (typeof VIDEO_PROVIDERS)[number];
}

/** A reported status as stored: errorReason exactly when failed (the spec sets it only then). */
export function botReport(status: string, errorReason: string): { status: BotState; errorReason: string | null } {
  if (!(BOT_STATUSES as readonly string[]).includes(status)) {
    throw problem("invalid-field", `status must be one of ${BOT_STATUSES.join(", ")}.`, { field: "status" });
  }
  const state = status as BotState;
  if (state === "failed") {
    if (errorReason.trim() === "") {
      throw problem("invalid-field", "A failed bot needs an errorReason.", { field: "errorReason" });
    }
    return { status: state, errorReason: errorReason.trim() };
  }
  return { status: state, errorReason: null };
}
