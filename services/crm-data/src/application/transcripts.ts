import type { Transcript } from "@platform/contracts/crm";
import { parseId } from "@platform/kit/ids";
import { assertReadable } from "../domain/access.js";
import { chunksInWindow, compiledText, durationOf, transcriptWindow } from "../domain/transcript.js";
import { chunkMessage } from "../messages.js";
import type { Store } from "../store/index.js";

// The recording use cases: whether a meeting's transcript or chat may be read now, and the
// transcript of a meeting (or a window of it) compiled from its chunks. The transcript handler
// maps the RPCs onto these and pages through the chunks and the chat.

/** The meeting and its bot, once the recording may be read now (else its problem). */
export async function readableRecording(
  store: Pick<Store, "findMeeting" | "findBot">,
  orgId: string,
  rawId: string,
  now: Date,
  what: "transcript" | "chat",
) {
  const meetingId = parseId("mtg_", rawId, "meetingId");
  const meeting = await store.findMeeting(orgId, meetingId);
  const bot = meeting && (await store.findBot(orgId, meetingId));
  const facts = { meetingEnd: meeting?.end, hasBot: !!bot, chunkCount: bot?.chunkCount ?? 0, hasChat: !!bot?.hasChat };
  assertReadable(facts, now, what);
  if (!bot) throw new Error("readable recording without a bot");
  return { meetingId, bot };
}

/** A transcript as asked for: the meeting, the window in seconds (whole when unset) and a language (any when empty). */
export interface TranscriptQuery {
  orgId: string;
  meetingId: string;
  startTime: number | undefined;
  endTime: number | undefined;
  language: string;
}

/** A meeting's transcript, or the window of it asked for, with its chunks' text compiled. */
export async function meetingTranscript(
  store: Pick<Store, "findMeeting" | "findBot" | "allChunks">,
  now: Date,
  query: TranscriptQuery,
): Promise<Omit<Transcript, "$typeName">> {
  const { meetingId, bot } = await readableRecording(store, query.orgId, query.meetingId, now, "transcript");
  const all = await store.allChunks(meetingId);
  const duration = durationOf(all);
  const window = transcriptWindow(duration, query.startTime, query.endTime);
  const language = query.language.trim().toLowerCase();
  const chunks = chunksInWindow(
    language === "" ? all : all.filter((c) => c.language.toLowerCase() === language),
    window,
  );
  return {
    meetingId,
    botId: bot.botId,
    durationSeconds: duration,
    windowStart: window.start,
    windowEnd: window.end,
    chunks: chunks.map((c) => chunkMessage(c, true)),
    compiledText: compiledText(chunks),
  };
}
