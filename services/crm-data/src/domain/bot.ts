import { BOT_STATUSES, VIDEO_PROVIDERS } from "@platform/contracts/crm";
import { problem } from "@platform/kit/problems";

/** The spec's recording-bot states and video providers (the contracts' lists, which the gateway documents). */
export { BOT_STATUSES, VIDEO_PROVIDERS };

export type BotState = (typeof BOT_STATUSES)[number];

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
