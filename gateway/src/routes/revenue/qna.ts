import {
  type AnswerBody,
  answerQnaRequest,
  createQnaRequest,
  type QnaBody,
  qnaBacklogJson,
  qnaJson,
} from "../../mapping/revenue.js";
import { defineRoute, type RouteSpec } from "../../route.js";
import { answerQnaRequestSchema, createQnaRequestSchema, transitionQnaRequestSchema } from "../../schemas/revenue.js";
import type { ServiceClients } from "../../services.js";
import { getById, optionalBody, readerFrom, requiredFrom } from "../shared.js";

const required = requiredFrom("revenue");
const read = readerFrom("revenue");

/** The deal's Q&A backlog and its items. */
export function qnaRoutes({ qnas }: ServiceClients["revenue"]): RouteSpec[] {
  return [
    defineRoute({
      url: "/deals/:dealId/qnas",
      operationId: "getQnaBacklog",
      summary: "Q&A backlog of a deal: six buckets, full counts, at most 25 items each",
      tag: "Q&As",
      scope: "qna:read",
      problems: ["deal-not-found"],
      ...getById("dealId", "deal_", "QnaBacklog", async (id, call) =>
        qnaBacklogJson(await qnas.getQnaBacklog(id, call.callOptions())),
      ),
    }),
    defineRoute({
      method: "GET",
      url: "/deals/:dealId/qnas/meetings/:meetingId",
      operationId: "getQnaBacklogForMeeting",
      summary: "Q&A backlog filtered to the items that came up in one meeting",
      tag: "Q&As",
      scope: "qna:read",
      tier: "read",
      ids: { dealId: "deal_", meetingId: "mtg_" },
      schema: { response: { 200: { $ref: "QnaBacklog#" } } },
      problems: ["deal-not-found", "meeting-not-found"],
      async handler(call, request) {
        const { dealId, meetingId } = request.params as { dealId: string; meetingId: string };
        return qnaBacklogJson(await qnas.getQnaBacklog({ dealId, meetingId }, call.callOptions()));
      },
    }),
    defineRoute({
      url: "/qnas/:qnaId",
      operationId: "getQna",
      summary: "One Q&A item",
      tag: "Q&As",
      scope: "qna:read",
      problems: ["qna-item-not-found"],
      ...getById("qnaId", "qna_", "Qna", read(qnas.getQna, "qna", qnaJson)),
    }),
    defineRoute({
      method: "POST",
      url: "/deals/:dealId/qnas",
      operationId: "createQna",
      summary: "Create a Q&A item (discovery links an 8P field; rfi names a contact)",
      tag: "Q&As",
      scope: "qna:write",
      tier: "write",
      idempotencyKey: "required",
      ids: { dealId: "deal_" },
      schema: { body: createQnaRequestSchema, response: { 201: { $ref: "Qna#" } } },
      problems: [
        "deal-not-found",
        "contact-not-found",
        "meeting-not-found",
        "qna-shape-invalid",
        "insight-field-invalid",
      ],
      async handler(call, request, reply) {
        const { dealId } = request.params as { dealId: string };
        const res = await qnas.createQna(createQnaRequest(dealId, request.body as QnaBody), call.callOptions());
        reply.code(201);
        return qnaJson(required(res.qna, "qna"));
      },
    }),
    defineRoute({
      method: "POST",
      url: "/qnas/:qnaId/answer",
      operationId: "answerQna",
      summary: "Attach an answer (confidence >= 0.6 answers the item; below, it is kept as a draft)",
      tag: "Q&As",
      scope: "qna:write",
      tier: "write",
      idempotencyKey: "required",
      ids: { qnaId: "qna_" },
      schema: { body: answerQnaRequestSchema, response: { 200: { $ref: "Qna#" } } },
      problems: ["qna-item-not-found", "qna-transition-invalid", "answer-source-invalid", "meeting-not-found"],
      async handler(call, request) {
        const { qnaId } = request.params as { qnaId: string };
        const res = await qnas.answerQna(answerQnaRequest(qnaId, request.body as AnswerBody), call.callOptions());
        return qnaJson(required(res.qna, "qna"));
      },
    }),
    defineRoute({
      method: "POST",
      url: "/qnas/:qnaId/transitions/:targetState",
      operationId: "transitionQna",
      summary: "Move a Q&A item to open, answered or dismissed, as the state table allows",
      tag: "Q&As",
      scope: "qna:write",
      tier: "write",
      idempotencyKey: "required",
      ids: { qnaId: "qna_" },
      schema: { body: transitionQnaRequestSchema, response: { 200: { $ref: "Qna#" } } },
      problems: ["invalid-target-state", "qna-item-not-found", "qna-transition-invalid"],
      async handler(call, request) {
        const { qnaId, targetState } = request.params as { qnaId: string; targetState: string };
        const body = optionalBody<{ reason?: string }>(request.body);
        const res = await qnas.transitionQna({ qnaId, targetState, reason: body.reason ?? "" }, call.callOptions());
        return qnaJson(required(res.qna, "qna"));
      },
    }),
  ];
}
