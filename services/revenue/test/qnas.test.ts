import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { DealService, InsightService, QnaService } from "@platform/contracts/revenue";
import { newId } from "@platform/kit/ids";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestRevenue, type Org, outboxRows, problemDetailOf, problemOf, type TestRevenue } from "./builders.js";

let t: TestRevenue;
let org: Org;
let dealId: string;
const qnas = () => t.caller(QnaService, org.orgId);

beforeAll(async () => {
  t = await createTestRevenue();
  org = await t.givenOrg();
  const { deal } = await t.caller(DealService, org.orgId).createDeal({
    name: "Q&A deal",
    accountId: org.accountId,
    stage: "Discovery",
  });
  dealId = deal?.id ?? "";
});
afterAll(() => t.close());

const occurrence = () => ({
  meetingId: org.meetingId,
  occurredAt: timestampFromDate(new Date("2026-03-01T10:05:00Z")),
});
const discovery = (overrides = {}) => ({
  dealId,
  direction: "discovery",
  questionText: "Who owns the budget?",
  linkedInsight: { schemaType: "power", fieldKey: "budgetHolder" },
  occurrences: [occurrence()],
  ...overrides,
});
const rfi = (overrides = {}) => ({
  dealId,
  direction: "rfi",
  questionText: "Do you support SSO?",
  contactId: org.contactId,
  occurrences: [occurrence()],
  ...overrides,
});

describe("creating Q&A items", () => {
  it("creates open items, importance medium by default, with the occurrence's source recorded", async () => {
    const { qna } = await qnas().createQna(discovery());
    expect(qna).toMatchObject({
      state: "open",
      direction: "discovery",
      importance: "medium",
      linkedInsight: { schemaType: "power", fieldKey: "budgetHolder" },
      occurrences: [{ meetingId: org.meetingId, source: "webhook" }],
    });
    expect(qna?.contact).toBeUndefined();
    const { qna: asked } = await qnas().createQna(rfi({ importance: "high" }));
    expect(asked).toMatchObject({
      direction: "rfi",
      importance: "high",
      contact: { id: org.contactId, displayName: "Ada Lovelace" },
    });
    expect((await qnas().getQna({ qnaId: asked?.id ?? "" })).qna?.id).toBe(asked?.id);
  });

  it("enforces the shapes: discovery links an 8P field of the schema, rfi names a contact of the org", async () => {
    expect(await problemOf(qnas().createQna(discovery({ linkedInsight: undefined })))).toBe("qna-shape-invalid");
    expect(await problemOf(qnas().createQna(rfi({ contactId: undefined })))).toBe("qna-shape-invalid");
    expect(await problemOf(qnas().createQna(discovery({ direction: "sideways" })))).toBe("qna-shape-invalid");
    expect(await problemOf(qnas().createQna(discovery({ occurrences: [] })))).toBe("qna-shape-invalid");
    expect(
      await problemOf(qnas().createQna(discovery({ linkedInsight: { schemaType: "power", fieldKey: "shoeSize" } }))),
    ).toBe("insight-field-invalid");
    expect(
      await problemOf(
        qnas().createQna(discovery({ linkedInsight: { schemaType: "price", fieldKey: "budgetHolder" } })),
      ),
    ).toBe("insight-field-invalid");
    expect(await problemOf(qnas().createQna(rfi({ contactId: newId("cont_") })))).toBe("contact-not-found");
    const other = await t.givenOrg();
    expect(await problemOf(qnas().createQna(rfi({ contactId: other.contactId })))).toBe("contact-not-found");
    expect(
      await problemOf(qnas().createQna(rfi({ occurrences: [{ ...occurrence(), meetingId: newId("mtg_") }] }))),
    ).toBe("meeting-not-found");
    expect(await problemOf(qnas().createQna(rfi({ dealId: newId("deal_") })))).toBe("deal-not-found");
  });
});

describe("answers", () => {
  it("answers at confidence >= 0.6, keeps a weaker answer as a draft, and refuses a dismissed item", async () => {
    const { qna } = await qnas().createQna(rfi());
    const id = qna?.id ?? "";
    const draft = await qnas().answerQna({ qnaId: id, answerText: "Maybe", source: { type: "external" } });
    expect(draft.qna).toMatchObject({ state: "open", answerText: "Maybe" });
    const weak = await qnas().answerQna({
      qnaId: id,
      answerText: "Probably",
      source: { type: "manual" },
      confidence: 0.59,
    });
    expect(weak.qna?.state).toBe("open");
    const answered = await qnas().answerQna({
      qnaId: id,
      answerText: "Yes, SAML and OIDC",
      source: { type: "meeting", meetingId: org.meetingId, chunkId: "chnk_1" },
    });
    expect(answered.qna).toMatchObject({ state: "answered", answerText: "Yes, SAML and OIDC" });
    await qnas().transitionQna({ qnaId: id, targetState: "dismissed" });
    const refused = await problemDetailOf(qnas().answerQna({ qnaId: id, answerText: "x", source: { type: "manual" } }));
    expect(refused).toMatchObject({ name: "qna-transition-invalid", extensions: { currentState: "dismissed" } });
  });

  it("checks the source: meetingId for meetings, documentId for grounding documents, a known type", async () => {
    const { qna } = await qnas().createQna(rfi());
    const id = qna?.id ?? "";
    const answer = (source: object) => problemOf(qnas().answerQna({ qnaId: id, answerText: "x", source }));
    expect(await answer({ type: "meeting" })).toBe("answer-source-invalid");
    expect(await answer({ type: "grounding-doc" })).toBe("answer-source-invalid");
    expect(await answer({ type: "hearsay" })).toBe("answer-source-invalid");
    expect(await answer({ type: "meeting", meetingId: newId("mtg_") })).toBe("meeting-not-found");
    expect(
      await problemOf(qnas().answerQna({ qnaId: newId("qna_"), answerText: "x", source: { type: "manual" } })),
    ).toBe("qna-item-not-found");
  });
});

describe("explicit transitions", () => {
  it("follow the state table exactly and 409 the rest with the current state", async () => {
    const { qna } = await qnas().createQna(discovery());
    const id = qna?.id ?? "";
    const move = (targetState: string) => qnas().transitionQna({ qnaId: id, targetState });
    const refused = async (targetState: string, currentState: string) =>
      expect(await problemDetailOf(move(targetState))).toMatchObject({
        name: "qna-transition-invalid",
        extensions: { currentState },
      });
    await refused("open", "open");
    expect((await move("answered")).qna?.state).toBe("answered");
    await refused("answered", "answered");
    expect((await move("open")).qna?.state).toBe("open");
    expect((await move("dismissed")).qna?.state).toBe("dismissed");
    await refused("answered", "dismissed");
    await refused("dismissed", "dismissed");
    expect((await move("open")).qna?.state).toBe("open");
    expect((await move("dismissed")).qna?.state).toBe("dismissed");
    expect((await move("open")).qna?.state).toBe("open");
    expect((await move("answered")).qna?.state).toBe("answered");
    expect((await move("dismissed")).qna?.state).toBe("dismissed");
    expect(await problemOf(move("closed"))).toBe("invalid-target-state");
    const events = (await outboxRows(t.db)).filter((r) => r.subject === id).map((r) => r.type);
    expect(events).toEqual(["revenue.qna.created", ...Array(8).fill("revenue.qna.updated")]);
  });
});

describe("backlog", () => {
  it("has all six buckets with full counts and at most 25 items, filterable by meeting", async () => {
    const mine = await t.givenOrg();
    const { deal } = await t.caller(DealService, mine.orgId).createDeal({
      name: "Backlog",
      accountId: mine.accountId,
      stage: "Discovery",
    });
    const caller = t.caller(QnaService, mine.orgId);
    const other = await t.givenMeeting({ orgId: mine.orgId });
    const at = timestampFromDate(new Date("2026-03-01T10:00:00Z"));
    for (let i = 0; i < 27; i++) {
      await caller.createQna({
        dealId: deal?.id ?? "",
        direction: "rfi",
        questionText: `Question ${i}`,
        contactId: mine.contactId,
        occurrences: [{ meetingId: i < 2 ? other.id : mine.meetingId, occurredAt: at }],
      });
    }
    const backlog = await caller.getQnaBacklog({ dealId: deal?.id ?? "" });
    expect(backlog.rfi?.open?.count).toBe(27);
    expect(backlog.rfi?.open?.items).toHaveLength(25);
    expect(backlog.discovery?.open).toMatchObject({ count: 0, items: [] });
    expect(backlog.rfi?.dismissed).toMatchObject({ count: 0, items: [] });
    const filtered = await caller.getQnaBacklog({ dealId: deal?.id ?? "", meetingId: other.id });
    expect(filtered.rfi?.open?.count).toBe(2);
    const unrelated = await t.givenMeeting({ orgId: mine.orgId });
    const empty = await caller.getQnaBacklog({ dealId: deal?.id ?? "", meetingId: unrelated.id });
    expect(empty.rfi?.open).toMatchObject({ count: 0, items: [] });
    expect(await problemOf(caller.getQnaBacklog({ dealId: deal?.id ?? "", meetingId: newId("mtg_") }))).toBe(
      "meeting-not-found",
    );
    expect(await problemOf(caller.getQnaBacklog({ dealId: newId("deal_") }))).toBe("deal-not-found");
  });
});

describe("auto-close", () => {
  it("answers an open discovery item when its linked 8P field receives an insight", async () => {
    const { qna } = await qnas().createQna(discovery({ linkedInsight: { schemaType: "plan", fieldKey: "nextStep" } }));
    const { qna: dismissed } = await qnas().createQna(
      discovery({ linkedInsight: { schemaType: "plan", fieldKey: "nextStep" } }),
    );
    await qnas().transitionQna({ qnaId: dismissed?.id ?? "", targetState: "dismissed" });
    const insights = t.caller(InsightService, org.orgId);
    await insights.createInsightRecord({ dealId, schemaType: "plan" });
    await insights.appendInsightItem({
      dealId,
      schemaType: "plan",
      fieldKey: "nextStep",
      value: { kind: { case: "stringValue", value: "Security review on Friday" } },
    });
    expect((await qnas().getQna({ qnaId: qna?.id ?? "" })).qna).toMatchObject({
      state: "answered",
      answerText: "Security review on Friday",
    });
    // Only open items close: a dismissed one stays dismissed.
    expect((await qnas().getQna({ qnaId: dismissed?.id ?? "" })).qna?.state).toBe("dismissed");
  });
});
