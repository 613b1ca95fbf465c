import { type ProblemName, problem } from "@platform/kit/problems";
import { transcriptExpired } from "./retention.js";

/** What decides whether a meeting's recording can be read now. */
export interface RecordingFacts {
  /** The meeting's end, undefined when the meeting is unknown to the org. */
  meetingEnd: Date | undefined;
  /** Whether a bot reported on the meeting. */
  hasBot: boolean;
  /** Chunks stored so far. */
  chunkCount: number;
  /** Whether any chat message was stored. */
  hasChat: boolean;
}

/**
 * Why the transcript (or the chat) cannot be read now, in the order a client can act on:
 * unknown meeting, nothing recorded, then expired. Undefined when it can. The transcript
 * needs chunks; the chat has "the same errors" (spec), so it needs the bot to have recorded
 * something: chunks or chat messages (an empty page then just means nobody wrote).
 */
export function recordingBlocked(f: RecordingFacts, now: Date, what: "transcript" | "chat"): ProblemName | undefined {
  if (!f.meetingEnd) return "meeting-not-found";
  const recorded = what === "transcript" ? f.chunkCount > 0 : f.chunkCount > 0 || f.hasChat;
  if (!f.hasBot || !recorded) return "transcript-not-available";
  if (transcriptExpired(f.meetingEnd, now)) return "transcript-expired";
  return undefined;
}

const DETAILS: Partial<Record<ProblemName, string>> = {
  "meeting-not-found": "The meeting was not found.",
  "transcript-not-available": "No recording bot was configured for the meeting, or it recorded nothing.",
  "transcript-expired": "The transcript is older than the 12-month retention and is no longer available.",
};

/** Throws the problem of `recordingBlocked`, if any. */
export function assertReadable(f: RecordingFacts, now: Date, what: "transcript" | "chat"): void {
  const blocked = recordingBlocked(f, now, what);
  if (blocked) throw problem(blocked, DETAILS[blocked]);
}
