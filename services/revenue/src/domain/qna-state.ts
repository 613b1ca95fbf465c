// The Q&A item state machine of the spec, and the answer confidence rule.

export const QNA_STATES = ["open", "answered", "dismissed"] as const;
export type QnaState = (typeof QNA_STATES)[number];

export const isQnaState = (raw: string): raw is QnaState => (QNA_STATES as readonly string[]).includes(raw);

/** Explicit transitions the state table allows: from → targets. */
const TRANSITIONS: Record<QnaState, readonly QnaState[]> = {
  open: ["answered", "dismissed"],
  answered: ["open", "dismissed"],
  dismissed: ["open"],
};

export const canTransition = (from: QnaState, to: QnaState): boolean => TRANSITIONS[from].includes(to);

export const ANSWER_SOURCE_TYPES = ["meeting", "manual", "grounding-doc", "external"] as const;
export type AnswerSourceType = (typeof ANSWER_SOURCE_TYPES)[number];

export interface AnswerSource {
  type: AnswerSourceType;
  meetingId?: string;
  chunkId?: string;
  documentId?: string;
}

/** An answer at or above this confidence answers the item; below, it is kept as a draft. */
export const ANSWER_THRESHOLD = 0.6;

/**
 * The confidence of an answer when the caller gives none: 1.0 manual, 0.5 grounding-doc and
 * external, and the service's own score for a meeting: 0.8 when it points at the transcript
 * chunk that says it, 0.6 for the meeting as a whole (just enough to answer).
 */
export function defaultConfidence(source: AnswerSource): number {
  switch (source.type) {
    case "manual":
      return 1;
    case "grounding-doc":
    case "external":
      return 0.5;
    case "meeting":
      return source.chunkId ? 0.8 : 0.6;
  }
}

/** Why a source lacks what its type requires, or undefined. */
export function answerSourceProblem(source: AnswerSource): string | undefined {
  if (source.type === "meeting" && !source.meetingId) return "source.meetingId is required for a meeting source";
  if (source.type === "grounding-doc" && !source.documentId) {
    return "source.documentId is required for a grounding-doc source";
  }
  if (source.type !== "meeting" && source.chunkId) return "source.chunkId belongs to a meeting source only";
  return undefined;
}

/** The state after attaching an answer of `confidence` to an item that is not dismissed. */
export function stateAfterAnswer(current: Exclude<QnaState, "dismissed">, confidence: number): QnaState {
  if (confidence >= ANSWER_THRESHOLD) return "answered";
  // A weak answer never demotes an answered item; on an open one it is a draft.
  return current;
}
