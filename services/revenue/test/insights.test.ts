import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { DealService, InsightService } from "@platform/contracts/revenue";
import { newId } from "@platform/kit/ids";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INSIGHT_PREFIX, INSIGHT_TYPES } from "../src/domain/insight-types.js";
import { createTestRevenue, type Org, outboxRows, problemDetailOf, problemOf, type TestRevenue } from "./builders.js";

let t: TestRevenue;
let org: Org;
let dealId: string;
const insights = (opts = {}) => t.caller(InsightService, org.orgId, opts);
const value = (v: JsonValue) => fromJson(ValueSchema, v);

beforeAll(async () => {
  t = await createTestRevenue();
  org = await t.givenOrg();
  const { deal } = await t.caller(DealService, org.orgId).createDeal({
    name: "Insight deal",
    accountId: org.accountId,
    stage: "Discovery",
  });
  dealId = deal?.id ?? "";
});
afterAll(() => t.close());

describe("8P records", () => {
  it("creates a record with an empty array per schema field (201), then returns it as it is (200)", async () => {
    const created = await insights().createInsightRecord({ dealId, schemaType: "power" });
    expect(created.created).toBe(true);
    expect(created.record?.id).toMatch(/^powr_/);
    expect(Object.fromEntries(Object.entries(created.record?.fields ?? {}).map(([k, v]) => [k, v.items]))).toEqual({
      decisionMakers: [],
      budgetHolder: [],
      procurementRequired: [],
    });
    const again = await insights().createInsightRecord({ dealId, schemaType: "power" });
    expect(again).toMatchObject({ created: false, record: { id: created.record?.id } });
    const deal = await t.caller(DealService, org.orgId).getDeal({ dealId });
    expect(deal.deal?.insightSummary?.powerId).toBe(created.record?.id);
    expect(deal.deal?.insightSummary?.planId).toBeUndefined();
  });

  it("refuses an unknown type, an unknown deal and an unknown schema", async () => {
    expect(await problemOf(insights().createInsightRecord({ dealId, schemaType: "price" }))).toBe(
      "invalid-schema-type",
    );
    expect(await problemOf(insights().createInsightRecord({ dealId: newId("deal_"), schemaType: "pain" }))).toBe(
      "deal-not-found",
    );
    expect(
      await problemOf(insights().createInsightRecord({ dealId, schemaType: "pain", schemaId: newId("schm_") })),
    ).toBe("schema-not-found");
  });

  it("appends items oldest to newest, typed per the schema, importance medium by default", async () => {
    await insights().createInsightRecord({ dealId, schemaType: "problem" });
    const append = (fieldKey: string, v: JsonValue, extra = {}) =>
      insights().appendInsightItem({ dealId, schemaType: "problem", fieldKey, value: value(v), ...extra });
    await append("problemStatement", "Manual tables");
    t.clock.advance(1000);
    const { record } = await append("problemStatement", "Errors reach production", {
      importance: "high",
      rationale: "Said twice",
      capturedFrom: { meetingId: org.meetingId, chunkId: "chnk_9" },
    });
    const items = record?.fields.problemStatement?.items ?? [];
    expect(items.map((i) => i.value?.kind.value)).toEqual(["Manual tables", "Errors reach production"]);
    expect(items[0]).toMatchObject({
      importance: "medium",
      capturedBy: { type: "ai-agent", agentName: "integration:tok_test" },
    });
    expect(items[0]?.capturedFrom).toBeUndefined();
    expect(items[1]).toMatchObject({
      importance: "high",
      rationale: "Said twice",
      capturedFrom: { meetingId: org.meetingId, chunkId: "chnk_9" },
    });
    expect((await append("rootCauses", ["a", "b"])).record?.fields.rootCauses?.items).toHaveLength(1);

    const invalid = async (fieldKey: string, v: JsonValue) => (await problemDetailOf(append(fieldKey, v))).name;
    expect(await invalid("rootCauses", "not a list")).toBe("insight-field-invalid");
    expect(await invalid("problemStatement", 3)).toBe("insight-field-invalid");
    expect(await invalid("problemStatement", null)).toBe("insight-field-invalid");
    expect(await invalid("shoeSize", "x")).toBe("insight-field-invalid");
    expect(await problemOf(append("problemStatement", "x", { capturedFrom: { meetingId: newId("mtg_") } }))).toBe(
      "meeting-not-found",
    );
    expect(
      await problemOf(
        insights().appendInsightItem({ dealId, schemaType: "plan", fieldKey: "nextStep", value: value("x") }),
      ),
    ).toBe("insight-record-not-found");
    const appended = (await outboxRows(t.db)).filter((r) => r.type === "revenue.insight.item-appended");
    expect(appended).toHaveLength(3);
  });

  it("reads all eight (absent ones missing), one by type, and one by id", async () => {
    const all = await insights().listDealInsights({ dealId });
    expect(all.records.map((r) => r.schemaType).sort()).toEqual(["power", "problem"]);
    const problem = await insights().getDealInsight({ dealId, schemaType: "problem" });
    expect((await insights().getInsight({ insightId: problem.record?.id ?? "" })).record?.schemaType).toBe("problem");
    expect(await problemOf(insights().getDealInsight({ dealId, schemaType: "pain" }))).toBe("insight-record-not-found");
    expect(await problemOf(insights().getDealInsight({ dealId, schemaType: "nope" }))).toBe("invalid-schema-type");
    expect(await problemOf(insights().getInsight({ insightId: newId("deal_") }))).toBe("invalid-resource-id");
    for (const type of INSIGHT_TYPES) {
      expect(await problemOf(insights().getInsight({ insightId: newId(INSIGHT_PREFIX[type]) }))).toBe(
        "insight-record-not-found",
      );
    }
    const other = await t.givenOrg();
    expect(
      await problemOf(t.caller(InsightService, other.orgId).getInsight({ insightId: problem.record?.id ?? "" })),
    ).toBe("insight-record-not-found");
  });

  it("creates once under concurrent creates of one type", async () => {
    const results = await Promise.all(
      [1, 2, 3].map(() => insights().createInsightRecord({ dealId, schemaType: "phases" })),
    );
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.record?.id)).size).toBe(1);
  });
});
