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
}

/**
 * Why the transcript (or, with `needsChunks` false, the chat) cannot be read now, in the
 * order a client can act on: unknown meeting, nothing recorded, then expired.
 * Undefined when it can.
 */
export function recordingBlocked(f: RecordingFacts, now: Date, needsChunks: boolean): ProblemName | undefined {
  if (!f.meetingEnd) return "meeting-not-found";
  if (!f.hasBot || (needsChunks && f.chunkCount === 0)) return "transcript-not-available";
  if (transcriptExpired(f.meetingEnd, now)) return "transcript-expired";
  return undefined;
}

const DETAILS: Partial<Record<ProblemName, string>> = {
  "meeting-not-found": "The meeting was not found.",
  "transcript-not-available": "No recording bot was configured for the meeting, or it recorded nothing.",
  "transcript-expired": "The transcript is older than the 12-month retention and is no longer available.",
};

/** Throws the problem of `recordingBlocked`, if any. */
export function assertReadable(f: RecordingFacts, now: Date, needsChunks: boolean): void {
  const blocked = recordingBlocked(f, now, needsChunks);
  if (blocked) throw problem(blocked, DETAILS[blocked]);
}
