import { describe, expect, it } from "vitest";
import {
  ANSWER_THRESHOLD,
  answerSourceProblem,
  canTransition,
  defaultConfidence,
  isQnaState,
  QNA_STATES,
  type QnaState,
  stateAfterAnswer,
} from "../../src/domain/qna-state.js";

describe("Q&A state machine", () => {
  // The spec's state table, as (from, to) pairs; every other pair is refused.
  const allowed: [QnaState, QnaState][] = [
    ["open", "answered"],
    ["open", "dismissed"],
    ["answered", "open"],
    ["answered", "dismissed"],
    ["dismissed", "open"],
  ];

  it("allows exactly the transitions of the state table", () => {
    for (const from of QNA_STATES) {
      for (const to of QNA_STATES) {
        const expected = allowed.some(([f, t]) => f === from && t === to);
        expect(canTransition(from, to), `${from} -> ${to}`).toBe(expected);
      }
    }
  });

  it("knows only open, answered and dismissed as states", () => {
    expect(QNA_STATES.every(isQnaState)).toBe(true);
    expect(isQnaState("closed")).toBe(false);
    expect(isQnaState("OPEN")).toBe(false);
  });
});

describe("answer confidence", () => {
  it("defaults per source type: 1.0 manual, 0.5 grounding-doc and external, the service's score for meetings", () => {
    expect(defaultConfidence({ type: "manual" })).toBe(1);
    expect(defaultConfidence({ type: "grounding-doc", documentId: "doc-1" })).toBe(0.5);
    expect(defaultConfidence({ type: "external" })).toBe(0.5);
    expect(defaultConfidence({ type: "meeting", meetingId: "mtg_x", chunkId: "chnk_x" })).toBe(0.8);
    expect(defaultConfidence({ type: "meeting", meetingId: "mtg_x" })).toBe(0.6);
  });

  it("answers at 0.6 and above, keeps a draft below", () => {
    expect(stateAfterAnswer("open", ANSWER_THRESHOLD)).toBe("answered");
    expect(stateAfterAnswer("open", 1)).toBe("answered");
    expect(stateAfterAnswer("open", 0.59)).toBe("open");
    expect(stateAfterAnswer("open", 0)).toBe("open");
    // A weak answer never demotes an answered item.
    expect(stateAfterAnswer("answered", 0.1)).toBe("answered");
  });

  it("requires a meetingId for meetings and a documentId for grounding documents", () => {
    expect(answerSourceProblem({ type: "meeting" })).toMatch(/meetingId/);
    expect(answerSourceProblem({ type: "grounding-doc" })).toMatch(/documentId/);
    expect(answerSourceProblem({ type: "manual", chunkId: "chnk_1" })).toMatch(/chunkId/);
    expect(answerSourceProblem({ type: "meeting", meetingId: "mtg_1" })).toBeUndefined();
    expect(answerSourceProblem({ type: "external" })).toBeUndefined();
  });
});
