import type { Clock } from "@platform/kit/clock";
import type { RequestContext } from "@platform/kit/context";
import { isId, newId } from "@platform/kit/ids";
import { problem } from "@platform/kit/problems";
import { insightField } from "../domain/deal-schema.js";
import { isInsightType } from "../domain/insight-types.js";
import { IMPORTANCES, type Importance, type QnaRecord } from "../domain/model.js";
import { type AnswerSource, canTransition, type QnaState, stateAfterAnswer } from "../domain/qna-state.js";
import { qnaCreatedEvent, qnaUpdatedEvent } from "../events/outbox-events.js";
import { qnaMessage } from "../messages.js";
import type { Store, TxStore } from "../store/index.js";
import { lockedDeal, visibleDeal } from "./deals.js";
import type { CrmReferences } from "./references.js";

// The Q&A use cases: creating an item against a deal's schema, known meetings and its contact
// at crm-data, answering it and moving it through its states, each with its outbox event.

export const qnaNotFound = (id: string) => problem("qna-item-not-found", `Q&A item ${id} was not found.`);
const meetingNotFound = (id: string) => problem("meeting-not-found", `Meeting ${id} was not found.`);

/** A meeting of the org as scheduling's events made it known here. */
export async function knownMeeting(reads: Pick<TxStore, "findMeeting">, orgId: string, id: string) {
  const meeting = isId("mtg_", id) ? await reads.findMeeting(orgId, id) : undefined;
  if (!meeting) throw meetingNotFound(id);
  return meeting;
}

/** The Q&A item, locked until the transaction ends, or its 404. */
async function lockedQna(w: Pick<TxStore, "lockQna">, orgId: string, id: string) {
  const item = await w.lockQna(orgId, id);
  if (!item) throw qnaNotFound(id);
  return item;
}

export function importanceOf(raw: string | undefined): Importance {
  if (raw === undefined) return "medium";
  if (!(IMPORTANCES as readonly string[]).includes(raw)) {
    throw problem("invalid-field", `importance must be one of: ${IMPORTANCES.join(", ")}.`, { field: "importance" });
  }
  return raw as Importance;
}

/** A new Q&A item; its shape and contact were checked before the write. */
export interface CreateQna {
  orgId: string;
  dealId: string;
  direction: QnaRecord["direction"];
  questionText: string;
  importance: Importance;
  linkedInsight: { schemaType: string; fieldKey: string } | undefined;
  contact: QnaRecord["contact"];
  occurrences: readonly { meetingId: string; occurredAt: Date | undefined }[];
}

/** A new Q&A item as the call names it: its contact by id. */
export interface NewQna extends Omit<CreateQna, "contact"> {
  contactId: string | undefined;
}

/**
 * Creates a Q&A item. Before the write: the deal, so an unknown deal is its 404 whatever else
 * the body names, then the contact at crm-data, a call no transaction waits on. `write` is the
 * write the caller opened for the call (once per Idempotency-Key).
 */
export async function createQna<R>(
  reads: { store: Pick<Store, "findDeal">; crm: CrmReferences; clock: Clock },
  caller: RequestContext,
  cmd: NewQna,
  write: (insert: (w: TxStore) => ReturnType<typeof insertQna>) => Promise<R>,
): Promise<R> {
  const { contactId, ...fields } = cmd;
  await visibleDeal(reads.store, cmd.orgId, cmd.dealId);
  let contact: QnaRecord["contact"] = null;
  if (contactId !== undefined) {
    const found = isId("cont_", contactId) ? await reads.crm.contact(caller, contactId) : undefined;
    if (!found) throw problem("contact-not-found", `Contact ${contactId} was not found.`);
    contact = { id: found.id, displayName: found.displayName };
  }
  return write((w) => insertQna(w, { ...fields, contact }, reads.clock.now()));
}

/** Creates the item under the deal's row lock and enqueues qna.created. */
async function insertQna(w: TxStore, cmd: CreateQna, now: Date) {
  const { orgId, dealId } = cmd;
  const deal = await lockedDeal(w, orgId, dealId);
  let linkedInsight: QnaRecord["linkedInsight"] = null;
  if (cmd.linkedInsight) {
    const { schemaType, fieldKey } = cmd.linkedInsight;
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
  for (const o of cmd.occurrences) {
    await knownMeeting(w, orgId, o.meetingId);
    if (!o.occurredAt) throw problem("qna-shape-invalid", "Every occurrence needs occurredAt.");
    occurrences.push({ meetingId: o.meetingId, occurredAt: o.occurredAt.toISOString(), source: "webhook" });
  }
  occurrences.sort((a, b) => a.occurredAt.localeCompare(b.occurredAt));
  const item: QnaRecord = {
    id: newId("qna_"),
    orgId,
    dealId,
    direction: cmd.direction,
    state: "open",
    questionText: cmd.questionText,
    answerText: null,
    answer: null,
    importance: cmd.importance,
    linkedInsight,
    contact: cmd.contact,
    occurrences,
    createdAt: now,
    updatedAt: now,
  };
  await w.insertQna(item);
  const message = qnaMessage(item);
  await w.enqueue(qnaCreatedEvent({ ...message, id: item.id, orgId }, now));
  return { qna: message };
}

/** Answers the item (its state follows the confidence) and enqueues qna.updated. */
export async function answerQna(
  w: TxStore,
  cmd: { orgId: string; id: string; answerText: string; source: AnswerSource; confidence: number },
  now: Date,
) {
  const { orgId, id, source, confidence } = cmd;
  const current = await lockedQna(w, orgId, id);
  if (current.state === "dismissed") {
    throw problem("qna-transition-invalid", `Q&A item ${id} is dismissed; reopen it before answering.`, {
      currentState: current.state,
    });
  }
  if (source.meetingId) await knownMeeting(w, orgId, source.meetingId);
  const state = stateAfterAnswer(current.state, confidence);
  // A weak answer to an answered item leaves the accepted answer in place.
  if (current.state === "answered" && state === "answered" && confidence < 0.6) return { qna: qnaMessage(current) };
  const item: QnaRecord = {
    ...current,
    state,
    answerText: cmd.answerText,
    answer: { ...source, confidence },
    updatedAt: now,
  };
  await w.updateQna(item);
  const message = qnaMessage(item);
  await w.enqueue(qnaUpdatedEvent({ ...message, id, orgId }, current.state, "answer", now));
  return { qna: message };
}

/** Moves the item to `target` where the state machine allows it, and enqueues qna.updated. */
export async function transitionQna(
  w: TxStore,
  cmd: { orgId: string; id: string; target: QnaState; reason: string | undefined },
  now: Date,
) {
  const { orgId, id, target } = cmd;
  const current = await lockedQna(w, orgId, id);
  if (!canTransition(current.state, target)) {
    throw problem("qna-transition-invalid", `A Q&A item cannot move from ${current.state} to ${target}.`, {
      currentState: current.state,
    });
  }
  const item: QnaRecord = { ...current, state: target, updatedAt: now };
  await w.updateQna(item);
  const message = qnaMessage(item);
  await w.enqueue(qnaUpdatedEvent({ ...message, id, orgId }, current.state, "transition", now, cmd.reason));
  return { qna: message };
}
