import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  AnswerQnaRequestSchema,
  AnswerQnaResponseSchema,
  CreateQnaRequestSchema,
  CreateQnaResponseSchema,
  type QnaService,
  TransitionQnaRequestSchema,
  TransitionQnaResponseSchema,
} from "@platform/contracts/revenue";
import { apiContext, requestContext } from "@platform/kit/connect";
import { replayOf } from "@platform/kit/idempotent-rpc";
import { isId, newId, parseId } from "@platform/kit/ids";
import { problem } from "@platform/kit/problems";
import { dealNotFound, visibleDeal } from "./deal.handler.js";
import { insightField } from "./domain/deal-schema.js";
import { isInsightType } from "./domain/insight-types.js";
import {
  ANSWER_SOURCE_TYPES,
  type AnswerSource,
  answerSourceProblem,
  canTransition,
  defaultConfidence,
  isQnaState,
  stateAfterAnswer,
} from "./domain/qna-state.js";
import { qnaCreatedEvent, qnaUpdatedEvent } from "./events/outbox-events.js";
import { IMPORTANCES, type Importance, type QnaRecord } from "./model.js";
import { qnaMessage } from "./proto.js";
import type { CrmReferences } from "./references.js";
import type { Backlog, Bucket, RevenueQueries, RevenueStore } from "./store/revenue.store.js";
import { idempotentWrite, type WriteDeps } from "./write.js";

export interface QnaDeps extends WriteDeps {
  store: RevenueStore;
  crm: CrmReferences;
}

const qnaNotFound = (id: string) => problem("qna-item-not-found", `Q&A item ${id} was not found.`);
const meetingNotFound = (id: string) => problem("meeting-not-found", `Meeting ${id} was not found.`);

/** A meeting of the org as scheduling's events made it known here. */
export async function knownMeeting(reads: Pick<RevenueQueries, "findMeeting">, orgId: string, id: string) {
  const meeting = isId("mtg_", id) ? await reads.findMeeting(orgId, id) : undefined;
  if (!meeting) throw meetingNotFound(id);
  return meeting;
}

export function importanceOf(raw: string | undefined): Importance {
  if (raw === undefined) return "medium";
  if (!(IMPORTANCES as readonly string[]).includes(raw)) {
    throw problem("invalid-field", `importance must be one of: ${IMPORTANCES.join(", ")}.`, { field: "importance" });
  }
  return raw as Importance;
}

const bucketMessage = (b: Bucket) => ({ count: b.count, items: b.items.map(qnaMessage) });
const bucketsMessage = (b: Backlog["discovery"]) => ({
  open: bucketMessage(b.open),
  answered: bucketMessage(b.answered),
  dismissed: bucketMessage(b.dismissed),
});

/** The Q&A backlog, items, answers and the state machine. */
export function qnaHandlers(deps: QnaDeps): ServiceImpl<typeof QnaService> {
  const { store, clock, crm } = deps;

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
      const id = parseId("qna_", req.qnaId, "qnaId");
      const item = await store.findQna(orgId, id);
      if (!item) throw qnaNotFound(id);
      return { qna: qnaMessage(item) };
    },

    async createQna(req, ctx) {
      // A replay answers what it answered first, without asking other services again.
      const replay = await replayOf(
        deps,
        ctx,
        { schema: CreateQnaRequestSchema, message: req },
        CreateQnaResponseSchema,
      );
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
      // The deal first, so an unknown deal is its 404 whatever else the body names.
      await visibleDeal(store, orgId, dealId);
      let contact: QnaRecord["contact"] = null;
      if (req.contactId !== undefined) {
        const found = isId("cont_", req.contactId) ? await crm.contact(requestContext(ctx), req.contactId) : undefined;
        if (!found) throw problem("contact-not-found", `Contact ${req.contactId} was not found.`);
        contact = { id: found.id, displayName: found.displayName };
      }
      return idempotentWrite(
        deps,
        ctx,
        { schema: CreateQnaRequestSchema, message: req },
        CreateQnaResponseSchema,
        async (w) => {
          const now = clock.now();
          const deal = await w.lockDeal(orgId, dealId);
          if (!deal) throw dealNotFound(dealId);
          let linkedInsight: QnaRecord["linkedInsight"] = null;
          if (req.linkedInsight) {
            const { schemaType, fieldKey } = req.linkedInsight;
            const schema = await w.findSchema(orgId, deal.schemaId);
            if (!isInsightType(schemaType) || !schema || !insightField(schema, schemaType, fieldKey)) {
              throw problem("insight-field-invalid", `The deal's schema has no 8P field '${schemaType}.${fieldKey}'.`, {
                schemaType,
                fieldKey,
              });
            }
            linkedInsight = { schemaType, fieldKey };
          }
          const occurrences: QnaRecord["occurrences"] = [];
          for (const o of req.occurrences) {
            await knownMeeting(w, orgId, o.meetingId);
            if (!o.occurredAt) throw problem("qna-shape-invalid", "Every occurrence needs occurredAt.");
            occurrences.push({
              meetingId: o.meetingId,
              occurredAt: timestampDate(o.occurredAt).toISOString(),
              source: "webhook",
            });
          }
          occurrences.sort((a, b) => a.occurredAt.localeCompare(b.occurredAt));
          const item: QnaRecord = {
            id: newId("qna_"),
            orgId,
            dealId,
            direction,
            state: "open",
            questionText: req.questionText,
            answerText: null,
            answer: null,
            importance,
            linkedInsight,
            contact,
            occurrences,
            createdAt: now,
            updatedAt: now,
          };
          await w.insertQna(item);
          const message = qnaMessage(item);
          await w.enqueue(qnaCreatedEvent({ ...message, id: item.id, orgId }, now));
          return { qna: message };
        },
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
      return idempotentWrite(
        deps,
        ctx,
        { schema: AnswerQnaRequestSchema, message: req },
        AnswerQnaResponseSchema,
        async (w) => {
          const now = clock.now();
          const current = await w.lockQna(orgId, id);
          if (!current) throw qnaNotFound(id);
          if (current.state === "dismissed") {
            throw problem("qna-transition-invalid", `Q&A item ${id} is dismissed; reopen it before answering.`, {
              currentState: current.state,
            });
          }
          if (source.meetingId) await knownMeeting(w, orgId, source.meetingId);
          const state = stateAfterAnswer(current.state, confidence);
          // A weak answer to an answered item leaves the accepted answer in place.
          if (current.state === "answered" && state === "answered" && confidence < 0.6)
            return { qna: qnaMessage(current) };
          const item: QnaRecord = {
            ...current,
            state,
            answerText: req.answerText,
            answer: { ...source, confidence },
            updatedAt: now,
          };
          await w.updateQna(item);
          const message = qnaMessage(item);
          await w.enqueue(qnaUpdatedEvent({ ...message, id, orgId }, current.state, "answer", now));
          return { qna: message };
        },
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
      return idempotentWrite(
        deps,
        ctx,
        { schema: TransitionQnaRequestSchema, message: req },
        TransitionQnaResponseSchema,
        async (w) => {
          const now = clock.now();
          const current = await w.lockQna(orgId, id);
          if (!current) throw qnaNotFound(id);
          if (!canTransition(current.state, target)) {
            throw problem("qna-transition-invalid", `A Q&A item cannot move from ${current.state} to ${target}.`, {
              currentState: current.state,
            });
          }
          const item: QnaRecord = { ...current, state: target, updatedAt: now };
          await w.updateQna(item);
          const message = qnaMessage(item);
          await w.enqueue(qnaUpdatedEvent({ ...message, id, orgId }, current.state, "transition", now, req.reason));
          return { qna: message };
        },
      );
    },
  };
}
