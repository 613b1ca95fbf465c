import { problem } from "@platform/kit/problems";

/** The part of a chunk the transcript rules need. */
export interface TimedChunk {
  speaker: string;
  text: string;
  startTime: number;
  endTime: number;
}

/**
 * The full length of a recording: the end of its last chunk over every language, so neither
 * a window nor a language filter changes it.
 */
export function durationOf(chunks: readonly Pick<TimedChunk, "endTime">[]): number {
  return chunks.reduce((max, c) => Math.max(max, c.endTime), 0);
}

export interface Window {
  start: number;
  end: number;
}

/**
 * The window a transcript request asks for: start defaults to 0 and end to the full length.
 * A start after the end, an end beyond the length or a negative start is 422
 * transcript-window-invalid.
 */
export function transcriptWindow(durationSeconds: number, start?: number, end?: number): Window {
  const window = { start: start ?? 0, end: end ?? durationSeconds };
  const invalid = (why: string) => problem("transcript-window-invalid", why, { durationSeconds });
  if (!Number.isFinite(window.start) || !Number.isFinite(window.end))
    throw invalid("startTime and endTime must be numbers.");
  if (window.start < 0) throw invalid("startTime must not be negative.");
  if (window.start > window.end) throw invalid("startTime must not be after endTime.");
  if (window.end > durationSeconds) {
    throw invalid(`endTime must not be beyond the transcript's length of ${durationSeconds} seconds.`);
  }
  return window;
}

/**
 * The chunks a window shows: whole chunks that overlap it (a chunk is one utterance and is
 * never cut). A zero-length window shows the chunks spoken at that instant.
 */
export function chunksInWindow<C extends TimedChunk>(chunks: readonly C[], w: Window): C[] {
  return chunks.filter((c) =>
    w.start === w.end ? c.startTime <= w.start && c.endTime >= w.end : c.endTime > w.start && c.startTime < w.end,
  );
}

/** The spec's compiledText: one `speaker: text` line per chunk, in the chunks' order. */
export function compiledText(chunks: readonly Pick<TimedChunk, "speaker" | "text">[]): string {
  return chunks.map((c) => `${c.speaker}: ${c.text}`).join("\n");
}
