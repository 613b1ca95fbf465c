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
