import { DealService, InsightService, QnaService } from "@platform/contracts/revenue";
import { sandboxDealId, sandboxOrgId } from "@platform/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REVENUE_SANDBOX, seedRevenueSandbox } from "../src/sandbox.js";
import { createTestRevenue, type TestRevenue } from "./builders.js";

const SEED = "sandbox-test";
let t: TestRevenue;

beforeAll(async () => {
  t = await createTestRevenue();
});
afterAll(() => t.close());

describe("revenue sandbox", () => {
  it("seeds once: deals in every stage, Q&As in every state and direction, populated 8P records", async () => {
    expect(await seedRevenueSandbox(t.db, t.clock, SEED)).toBe(true);
    expect(await seedRevenueSandbox(t.db, t.clock, SEED)).toBe(false);
    const acme = sandboxOrgId(SEED, "acme");
    const { deals } = await t.caller(DealService, acme).listDeals({ limit: 100 });
    expect(new Set(deals.map((d) => d.stage))).toEqual(
      new Set(["Discovery", "Qualification", "Proposal", "Negotiation", "Won", "Lost"]),
    );
    expect(deals.filter((d) => d.sourceRefs?.crm).length).toBeGreaterThanOrEqual(3);
    const analytical = sandboxDealId(SEED, "analytical-expansion");
    const backlog = await t.caller(QnaService, acme).getQnaBacklog({ dealId: analytical });
    for (const buckets of [backlog.discovery, backlog.rfi]) {
      expect([buckets?.open?.count, buckets?.answered?.count, buckets?.dismissed?.count]).toEqual([1, 1, 1]);
    }
    const { records } = await t.caller(InsightService, acme).listDealInsights({ dealId: analytical });
    const populated = REVENUE_SANDBOX.insights.filter((i) => i.deal === "analytical-expansion").length;
    expect(records).toHaveLength(populated);
    expect(records.every((r) => Object.values(r.fields).some((f) => f.items.length > 0))).toBe(true);
  });
});
