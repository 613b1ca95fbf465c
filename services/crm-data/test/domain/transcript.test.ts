import { ProblemError } from "@platform/kit/problems";
import { describe, expect, it } from "vitest";
import { chunksInWindow, compiledText, durationOf, transcriptWindow } from "../../src/domain/transcript.js";

const chunk = (speaker: string, startTime: number, endTime: number, text = `${speaker} at ${startTime}`) => ({
  speaker,
  text,
  startTime,
  endTime,
});

const problemName = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err instanceof ProblemError ? err.problemName : String(err);
  }
  return "no problem";
};

describe("transcript window", () => {
  it("defaults to the whole recording", () => {
    expect(transcriptWindow(300)).toEqual({ start: 0, end: 300 });
    expect(transcriptWindow(300, 120)).toEqual({ start: 120, end: 300 });
    expect(transcriptWindow(300, undefined, 60)).toEqual({ start: 0, end: 60 });
  });

  it("accepts the edges: an empty window and the full length", () => {
    expect(transcriptWindow(300, 300, 300)).toEqual({ start: 300, end: 300 });
    expect(transcriptWindow(300, 0, 300)).toEqual({ start: 0, end: 300 });
  });

  it("rejects start after end, an end beyond the length and a negative start", () => {
    expect(problemName(() => transcriptWindow(300, 200, 100))).toBe("transcript-window-invalid");
    expect(problemName(() => transcriptWindow(300, 0, 300.5))).toBe("transcript-window-invalid");
    expect(problemName(() => transcriptWindow(300, 400))).toBe("transcript-window-invalid");
    expect(problemName(() => transcriptWindow(300, -1, 10))).toBe("transcript-window-invalid");
    expect(problemName(() => transcriptWindow(300, Number.NaN))).toBe("transcript-window-invalid");
  });

  it("carries the length in the problem, so a client can correct its window", () => {
    try {
      transcriptWindow(300, 0, 301);
    } catch (err) {
      expect((err as ProblemError).extensions).toEqual({ durationSeconds: 300 });
      return;
    }
    throw new Error("expected a problem");
  });
});

describe("chunks in a window", () => {
  const chunks = [chunk("A", 0, 10), chunk("B", 10, 20), chunk("A", 20, 30)];

  it("keeps whole chunks that overlap the window, never cut", () => {
    expect(chunksInWindow(chunks, { start: 5, end: 15 }).map((c) => c.startTime)).toEqual([0, 10]);
    expect(chunksInWindow(chunks, { start: 10, end: 20 }).map((c) => c.startTime)).toEqual([10]);
    expect(chunksInWindow(chunks, { start: 0, end: 30 })).toHaveLength(3);
  });

  it("shows what is spoken at the instant of an empty window", () => {
    expect(chunksInWindow(chunks, { start: 15, end: 15 }).map((c) => c.startTime)).toEqual([10]);
  });
});

describe("compiledText and duration", () => {
  it("joins chunks as speaker: text lines, in order", () => {
    expect(compiledText([chunk("Ada", 0, 1, "Hello"), chunk("Blake", 1, 2, "Hi there")])).toBe(
      "Ada: Hello\nBlake: Hi there",
    );
    expect(compiledText([])).toBe("");
  });

  it("is the end of the last chunk, whatever the order", () => {
    expect(durationOf([chunk("A", 50, 61.5), chunk("B", 0, 10)])).toBe(61.5);
    expect(durationOf([])).toBe(0);
  });
});
