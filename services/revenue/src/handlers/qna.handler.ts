import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { QnaService } from "@platform/contracts/revenue";
import { apiContext, requestContext } from "@platform/kit/connect";
import { replayOfMethod } from "@platform/kit/idempotent-method";
import { findById, parseId } from "@platform/kit/ids";
import { problem } from "@platform/kit/problems";
import { visibleDeal } from "../application/deals.js";
import { answerQna, createQna, importanceOf, knownMeeting, qnaNotFound, transitionQna } from "../application/qnas.js";
import type { CrmReferences } from "../application/references.js";
import { idempotentWrite, type WriteDeps } from "../application/write.js";
import {
  ANSWER_SOURCE_TYPES,
  type AnswerSource,
  answerSourceProblem,
  defaultConfidence,
  isQnaState,
} from "../domain/qna-state.js";
import { qnaMessage } from "../messages.js";
import type { Store } from "../store/index.js";
import type { Backlog, Bucket } from "../store/qna.store.js";

export interface QnaDeps extends WriteDeps {
  store: Store;
  crm: CrmReferences;
}

const bucketMessage = (b: Bucket) => ({ count: b.count, items: b.items.map(qnaMessage) });
const bucketsMessage = (b: Backlog["discovery"]) => ({
  open: bucketMessage(b.open),
  answered: bucketMessage(b.answered),
  dismissed: bucketMessage(b.dismissed),
});

/** The Q&A backlog, items, answers and the state machine. */
export function qnaHandlers(deps: QnaDeps): ServiceImpl<typeof QnaService> {
  const { store, clock } = deps;

  return {
    async getQnaBacklog(req, ctx) {
      const { orgId } = apiContext(ctx);
      const deal = await visibleDeal(store, orgId, req.dealId);
      if (req.meetingId !== undefined) {
        parseId("mtg_", req.meetingId, "meetingId");
        await knownMeeting(store, orgId, req.meetingId);
      }
      const backlog = await store.backlog(deal.id, req.meetingId);
      return { dealId: deal.id, discovery: bucketsMessage(backlog.discovery), rfi: bucketsMessage(backlog.rfi) };
    },

    async getQna(req, ctx) {
      const { orgId } = apiContext(ctx);
      const item = await findById("qna_", req.qnaId, "qnaId", (id) => store.findQna(orgId, id), qnaNotFound);
      return { qna: qnaMessage(item) };
    },

    async createQna(req, ctx) {
      // A replay answers what it answered first, without asking other services again.
      const replay = await replayOfMethod(deps, ctx, QnaService.method.createQna, req);
      if (replay) return replay;
      const { orgId } = apiContext(ctx);
      const dealId = parseId("deal_", req.dealId, "dealId");
      const importance = importanceOf(req.importance);
      const direction = req.direction;
      if (direction !== "discovery" && direction !== "rfi") {
        throw problem("qna-shape-invalid", "direction must be discovery or rfi.");
      }
      if (direction === "discovery" && (!req.linkedInsight || req.contactId !== undefined)) {
        throw problem("qna-shape-invalid", "A discovery item needs linkedInsight and names no contact.");
      }
      if (direction === "rfi" && (req.contactId === undefined || req.linkedInsight)) {
        throw problem("qna-shape-invalid", "An rfi item needs contactId and links no insight.");
      }
      if (req.occurrences.length === 0) throw problem("qna-shape-invalid", "occurrences needs at least one entry.");
      const occurrences = req.occurrences.map((o) => ({
        meetingId: o.meetingId,
        occurredAt: o.occurredAt ? timestampDate(o.occurredAt) : undefined,
      }));
      return createQna(
        deps,
        requestContext(ctx),
        {
          orgId,
          dealId,
          direction,
          questionText: req.questionText,
          importance,
          linkedInsight: req.linkedInsight,
          contactId: req.contactId,
          occurrences,
        },
        (insert) => idempotentWrite(deps, ctx, QnaService.method.createQna, req, insert),
      );
    },

    async answerQna(req, ctx) {
      const { orgId } = apiContext(ctx);
      const id = parseId("qna_", req.qnaId, "qnaId");
      const type = req.source?.type ?? "";
      if (!(ANSWER_SOURCE_TYPES as readonly string[]).includes(type)) {
        throw problem("answer-source-invalid", `source.type must be one of: ${ANSWER_SOURCE_TYPES.join(", ")}.`);
      }
      const source: AnswerSource = {
        type: type as AnswerSource["type"],
        ...(req.source?.meetingId ? { meetingId: req.source.meetingId } : {}),
        ...(req.source?.chunkId ? { chunkId: req.source.chunkId } : {}),
        ...(req.source?.documentId ? { documentId: req.source.documentId } : {}),
      };
      const invalid = answerSourceProblem(source);
      if (invalid) throw problem("answer-source-invalid", invalid);
      const confidence = req.confidence ?? defaultConfidence(source);
      if (!(confidence >= 0 && confidence <= 1)) {
        throw problem("invalid-field", "confidence must be between 0.0 and 1.0.", { field: "confidence" });
      }
      return idempotentWrite(deps, ctx, QnaService.method.answerQna, req, (w) =>
        answerQna(w, { orgId, id, answerText: req.answerText, source, confidence }, clock.now()),
      );
    },

    async transitionQna(req, ctx) {
      const { orgId } = apiContext(ctx);
      const id = parseId("qna_", req.qnaId, "qnaId");
      const target = req.targetState;
      if (!isQnaState(target)) {
        throw problem("invalid-target-state", `'${target}' is not one of open, answered, dismissed.`, {
          targetState: target,
        });
      }
      return idempotentWrite(deps, ctx, QnaService.method.transitionQna, req, (w) =>
        transitionQna(w, { orgId, id, target, reason: req.reason }, clock.now()),
      );
    },
  };
}
