import { create, type DescMessage, type MessageInitShape, toJson } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  DealCreatedSchema,
  DealUpdatedSchema,
  InsightCreatedSchema,
  InsightItemAppendedSchema,
  QnaCreatedSchema,
  QnaUpdatedSchema,
} from "@platform/contracts/events/revenue";
import {
  MeetingBookedSchema,
  MeetingCanceledSchema,
  MeetingRescheduledSchema,
} from "@platform/contracts/events/scheduling";
import { SubscriptionDisabledSchema } from "@platform/contracts/events/webhooks";
import type { WebhookEventKind } from "@platform/contracts/webhooks";
import { EVENT_CATALOG } from "./catalog.js";

// Example data of every catalog kind, for POST /webhook-subscriptions/{id}/test with an
// eventType: what the producer of the kind publishes (so the payload is rendered exactly as a
// real event's, v2 or legacy), with recognisable example ids. The delivery marks it as a test
// (`test: true` in the envelope, trigger `test`), so a receiver never mistakes it for news.

/** The fixed ids of the examples: `_example` where a real id has its random part. */
const EX = {
  meeting: "mtg_example0000000000000000",
  user: "usr_example0000000000000000",
  schedule: "sch_example0000000000000000",
  deal: "deal_example000000000000000",
  account: "acc_example0000000000000000",
  qna: "qna_example0000000000000000",
  insight: "ins_example0000000000000000",
};

function meeting(orgId: string, at: Date, status: string) {
  const start = new Date(Math.ceil(at.getTime() / 3_600_000) * 3_600_000 + 24 * 3_600_000);
  return {
    id: EX.meeting,
    orgId,
    host: {
      userId: EX.user,
      email: "host@example.com",
      firstName: "Grace",
      lastName: "Hopper",
      displayName: "Grace Hopper",
    },
    attendee: { email: "ada@example.com", firstName: "Ada", lastName: "Lovelace", timeZone: "Europe/London" },
    title: "Example meeting (test event)",
    startTime: timestampFromDate(start),
    endTime: timestampFromDate(new Date(start.getTime() + 30 * 60_000)),
    timeZone: "Europe/Berlin",
    location: { type: "video", joinUrl: "https://meet.example.com/example" },
    status,
    createTime: timestampFromDate(at),
    updateTime: timestampFromDate(at),
  };
}

function deal(orgId: string, at: Date) {
  return {
    id: EX.deal,
    orgId,
    name: "Example deal (test event)",
    stage: "discovery",
    account: { id: EX.account, name: "Example Corp" },
    owner: { userId: EX.user, displayName: "Grace Hopper" },
    createTime: timestampFromDate(at),
    updateTime: timestampFromDate(at),
  };
}

function qna(orgId: string, at: Date, state: string) {
  return {
    id: EX.qna,
    orgId,
    dealId: EX.deal,
    direction: "discovery",
    state,
    questionText: "What problem are you solving? (test event)",
    importance: "high",
    createTime: timestampFromDate(at),
    updateTime: timestampFromDate(at),
  };
}

const json = <D extends DescMessage>(schema: D, init: MessageInitShape<D>) => toJson(schema, create(schema, init));

const EXAMPLES = {
  "scheduling.smartscheduler.booked": (orgId, at) =>
    json(MeetingBookedSchema, { meeting: meeting(orgId, at, "scheduled") }),
  "scheduling.smartscheduler.rescheduled": (orgId, at) =>
    json(MeetingRescheduledSchema, { meeting: meeting(orgId, at, "scheduled"), reason: "Example reason" }),
  "scheduling.smartscheduler.canceled": (orgId, at) =>
    json(MeetingCanceledSchema, { meeting: meeting(orgId, at, "canceled"), reason: "Example reason" }),
  "revenue.deal.created": (orgId, at) => json(DealCreatedSchema, { deal: deal(orgId, at) }),
  "revenue.deal.updated": (orgId, at) =>
    json(DealUpdatedSchema, { deal: { ...deal(orgId, at), stage: "proposal" }, previousStage: "discovery" }),
  "revenue.qna.created": (orgId, at) => json(QnaCreatedSchema, { qna: qna(orgId, at, "open") }),
  "revenue.qna.updated": (orgId, at) =>
    json(QnaUpdatedSchema, {
      qna: { ...qna(orgId, at, "answered"), answerText: "Example answer" },
      previousState: "open",
      cause: "answer",
    }),
  "revenue.insight.created": (orgId, at) =>
    json(InsightCreatedSchema, {
      record: {
        id: EX.insight,
        schemaType: "problem",
        dealId: EX.deal,
        orgId,
        createTime: timestampFromDate(at),
        updateTime: timestampFromDate(at),
      },
    }),
  "revenue.insight.item-appended": (orgId) =>
    json(InsightItemAppendedSchema, {
      recordId: EX.insight,
      dealId: EX.deal,
      orgId,
      schemaType: "problem",
      fieldKey: "pain",
      item: { itemId: "itm_example", importance: "high", value: { kind: { case: "stringValue", value: "Example" } } },
    }),
  "webhooks.subscription.disabled": (orgId, at) =>
    json(SubscriptionDisabledSchema, {
      subscriptionId: "sub_example0000000000000000",
      endpointUrl: "https://hooks.example.com/platform",
      reason: "failing",
      disabledAt: at.toISOString(),
      orgId,
    }),
} satisfies Record<WebhookEventKind, (orgId: string, at: Date) => unknown>;

/** Example data of a catalog kind, in its producer's form; undefined for a kind outside the catalog. */
export function exampleData(kind: string, orgId: string, at: Date): unknown {
  if (!EVENT_CATALOG.includes(kind)) return undefined;
  return EXAMPLES[kind as WebhookEventKind](orgId, at);
}
