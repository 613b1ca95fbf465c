import { type JsonObject, type JsonValue, type MessageInitShape, toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { iso, required, timestampsJson } from "@platform/contracts/rest/json";
import type {
  AnswerQnaRequestSchema,
  CreateDealRequestSchema,
  CreateQnaRequestSchema,
  Deal,
  DealFilterSchema,
  DealMeeting,
  GetQnaBacklogResponse,
  InsightItem,
  InsightRecord,
  Qna,
  QnaBucket,
  QnaBuckets,
  UpdateDealRequestSchema,
} from "@platform/contracts/revenue";
import { isCalendarDate } from "@platform/kit/dates";
import { problem } from "@platform/kit/problems";
import { INSIGHT_TYPES } from "../schemas/revenue.js";
import { bodyFields } from "./common.js";
import { parseInstant } from "./time.js";

// Revenue's messages → the spec's JSON (explicit nulls, ISO 8601 UTC), and request bodies → RPCs.

/** A calendar date that exists; anything else is 400 with the problem given. */
export function checkDate(raw: string, field: string, name: "invalid-field" | "invalid-filter"): string {
  if (!isCalendarDate(raw)) {
    throw problem(name, `'${field}' must be an ISO 8601 date (YYYY-MM-DD).`, { field });
  }
  return raw;
}

function listFields(d: Deal) {
  return {
    id: d.id,
    orgId: d.orgId,
    name: d.name,
    stage: d.stage,
    amount: d.amount ? { value: d.amount.value ?? null, currency: d.amount.currency } : null,
    closeDate: d.closeDate ?? null,
    account: required(d.account, "account"),
    owner: { userId: required(d.owner, "owner").userId, displayName: required(d.owner, "owner").displayName },
    ...timestampsJson(d),
  };
}

export function dealListItemJson(d: Deal) {
  const crm = d.sourceRefs?.crm;
  return {
    ...listFields(d),
    account: { id: d.account?.id, name: d.account?.name },
    sourceRefs: crm ? { crm: { id: crm.id } } : {},
  };
}

export function dealJson(d: Deal) {
  const crm = d.sourceRefs?.crm;
  const s = d.insightSummary;
  return {
    ...listFields(d),
    account: { id: d.account?.id, name: d.account?.name },
    primaryContact: d.primaryContact ? { id: d.primaryContact.id, displayName: d.primaryContact.displayName } : null,
    schemaId: d.schemaId,
    schemaVersion: d.schemaVersion,
    customFields: d.customFields ?? {},
    // One id per 8P type, as the schema lists them: null until that record exists.
    insightSummary: Object.fromEntries(INSIGHT_TYPES.map((t) => [`${t}Id`, s?.[`${t}Id`] ?? null])),
    sourceRefs: crm ? { crm: { id: crm.id, url: crm.url ?? null } } : {},
  };
}

export function dealMeetingJson(m: DealMeeting) {
  return {
    meetingId: m.meetingId,
    title: m.title,
    startTime: iso(m.startTime, "start_time"),
    endTime: iso(m.endTime, "end_time"),
    status: m.status,
    hasTranscript: m.hasTranscript,
  };
}

/** The query of GET /deals (and /accounts/{id}/deals), after its schema. */
export interface DealListQuery {
  search?: string;
  accountId?: string;
  stage?: string[];
  owner?: string;
  closingBefore?: string;
  closingAfter?: string;
}

export function dealFilter(query: DealListQuery): MessageInitShape<typeof DealFilterSchema> {
  return {
    search: query.search ?? "",
    accountId: query.accountId ?? "",
    stages: query.stage ?? [],
    ownerUserId: query.owner ?? "",
    closingBefore:
      query.closingBefore === undefined ? "" : checkDate(query.closingBefore, "closingBefore", "invalid-filter"),
    closingAfter:
      query.closingAfter === undefined ? "" : checkDate(query.closingAfter, "closingAfter", "invalid-filter"),
  };
}

/** A body of POST or PATCH /deals, as its schema admits it. */
export interface DealBody {
  name?: string;
  accountId?: string;
  stage?: string;
  amount?: { value?: number; currency?: string } | null;
  closeDate?: string | null;
  ownerId?: string;
  primaryContactId?: string | null;
  schemaId?: string;
  customFields?: Record<string, JsonValue>;
  sourceRefs?: { crm?: { id: string; url?: string } };
}

function amountInput(a: { value?: number; currency?: string }) {
  return { ...(a.value !== undefined ? { value: a.value } : {}), currency: a.currency ?? "" };
}

function commonInput(body: DealBody) {
  const crm = body.sourceRefs?.crm;
  return {
    ...(body.amount ? { amount: amountInput(body.amount) } : {}),
    ...(typeof body.closeDate === "string"
      ? { closeDate: checkDate(body.closeDate, "closeDate", "invalid-field") }
      : {}),
    ...(body.ownerId !== undefined ? { ownerId: body.ownerId } : {}),
    ...(typeof body.primaryContactId === "string" ? { primaryContactId: body.primaryContactId } : {}),
    ...(body.schemaId !== undefined ? { schemaId: body.schemaId } : {}),
    ...(body.customFields !== undefined ? { customFields: body.customFields as JsonObject } : {}),
    ...(crm ? { crmSourceId: crm.id, ...(crm.url !== undefined ? { crmSourceUrl: crm.url } : {}) } : {}),
  };
}

export function createDealRequest(body: DealBody): MessageInitShape<typeof CreateDealRequestSchema> {
  return { name: body.name ?? "", accountId: body.accountId ?? "", stage: body.stage ?? "", ...commonInput(body) };
}

export function updateDealRequest(dealId: string, body: DealBody): MessageInitShape<typeof UpdateDealRequestSchema> {
  const cleared = [
    ...(body.amount === null ? ["amount"] : []),
    ...(body.closeDate === null ? ["closeDate"] : []),
    ...(body.primaryContactId === null ? ["primaryContactId"] : []),
  ];
  return {
    dealId,
    ...bodyFields(body, "name", "accountId", "stage"),
    ...commonInput(body),
    clearedFields: cleared,
  };
}

/** A Q&A item in exactly the spec's fields: its deal and org stay internal (the backlog names the deal). */
export function qnaJson(q: Qna) {
  return {
    id: q.id,
    direction: q.direction,
    state: q.state,
    questionText: q.questionText,
    answerText: q.answerText ?? null,
    importance: q.importance,
    linkedInsight: q.linkedInsight
      ? { schemaType: q.linkedInsight.schemaType, fieldKey: q.linkedInsight.fieldKey }
      : null,
    contact: q.contact ? { id: q.contact.id, displayName: q.contact.displayName } : null,
    occurrences: q.occurrences.map((o) => ({
      meetingId: o.meetingId,
      occurredAt: iso(o.occurredAt, "occurred_at"),
      source: o.source,
    })),
    ...timestampsJson(q),
  };
}

const bucketJson = (b: QnaBucket | undefined) => ({ count: b?.count ?? 0, items: (b?.items ?? []).map(qnaJson) });
const bucketsJson = (b: QnaBuckets | undefined) => ({
  open: bucketJson(b?.open),
  answered: bucketJson(b?.answered),
  dismissed: bucketJson(b?.dismissed),
});

export function qnaBacklogJson(res: GetQnaBacklogResponse) {
  return { dealId: res.dealId, discovery: bucketsJson(res.discovery), rfi: bucketsJson(res.rfi) };
}

/** The body of POST /deals/{dealId}/qnas, as its schema admits it. */
export interface QnaBody {
  direction: string;
  questionText: string;
  importance?: string;
  linkedInsight?: { schemaType: string; fieldKey: string };
  contactId?: string;
  occurrences: { meetingId: string; occurredAt: string }[];
}

export function createQnaRequest(dealId: string, body: QnaBody): MessageInitShape<typeof CreateQnaRequestSchema> {
  return {
    dealId,
    ...bodyFields(body, "direction", "questionText", "importance", "linkedInsight", "contactId"),
    occurrences: body.occurrences.map((o, i) => {
      const occurredAt = parseInstant(o.occurredAt, { allowDate: false });
      if (!occurredAt) {
        throw problem(
          "invalid-field",
          `Field 'occurrences.${i}.occurredAt' must be an ISO 8601 date-time with a zone.`,
          {
            field: `occurrences.${i}.occurredAt`,
          },
        );
      }
      return { meetingId: o.meetingId, occurredAt };
    }),
  };
}

/** The body of POST /qnas/{qnaId}/answer, as its schema admits it. */
export interface AnswerBody {
  answerText: string;
  source: { type: string; meetingId?: string; chunkId?: string; documentId?: string };
  confidence?: number;
}

export function answerQnaRequest(qnaId: string, body: AnswerBody): MessageInitShape<typeof AnswerQnaRequestSchema> {
  return {
    qnaId,
    ...bodyFields(body, "answerText", "source", "confidence"),
  };
}

function insightItemJson(item: InsightItem) {
  const by = required(item.capturedBy, "captured_by");
  return {
    itemId: item.itemId,
    value: item.value ? toJson(ValueSchema, item.value) : null,
    importance: item.importance,
    rationale: item.rationale ?? null,
    capturedFrom: item.capturedFrom
      ? {
          meetingId: item.capturedFrom.meetingId,
          chunkId: item.capturedFrom.chunkId ?? null,
          capturedAt: iso(item.capturedFrom.capturedAt, "captured_at"),
        }
      : null,
    capturedBy:
      by.type === "user"
        ? { type: by.type, userId: by.userId ?? "", displayName: by.displayName ?? "" }
        : { type: by.type, agentName: by.agentName ?? "" },
  };
}

export function insightJson(r: InsightRecord) {
  return {
    id: r.id,
    schemaType: r.schemaType,
    dealId: r.dealId,
    orgId: r.orgId,
    schemaId: r.schemaId,
    schemaVersion: r.schemaVersion,
    fields: Object.fromEntries(Object.entries(r.fields).map(([key, list]) => [key, list.items.map(insightItemJson)])),
    ...timestampsJson(r),
  };
}

export function dealInsightsJson(dealId: string, records: InsightRecord[]) {
  return {
    dealId,
    ...Object.fromEntries(
      INSIGHT_TYPES.map((t) => {
        const record = records.find((r) => r.schemaType === t);
        return [t, record ? insightJson(record) : null];
      }),
    ),
  };
}

/** The body of an insight append, as its schema admits it. */
export interface AppendBody {
  value: JsonValue;
  importance?: string;
  rationale?: string;
  capturedFrom?: { meetingId: string; chunkId?: string };
}
