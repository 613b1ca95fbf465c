import { randomBytes } from "node:crypto";
import { DealService, InsightService } from "@platform/contracts/revenue";
import { type Db, openPg } from "@platform/kit/db";
import { newId } from "@platform/kit/ids";
import { kitMigrations, migrate } from "@platform/kit/migrate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { revenueMigrations } from "../src/server.js";
import { createTestRevenue, type Org, problemDetailOf, problemOf, type TestRevenue, withHeaders } from "./builders.js";

// The guards under real concurrency: PGlite runs one transaction at a time, so only a real
// Postgres shows that the unique index on (org, CRM id) and the idempotency record's primary
// key, not read-then-insert checks, decide between simultaneous requests.
const ADMIN_URL = process.env.POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const database = `revenue_it_${randomBytes(4).toString("hex")}`;
const PARALLEL = 8;

let admin: Db;
let db: Db;
let t: TestRevenue;
let org: Org;

beforeAll(async () => {
  admin = openPg({ url: ADMIN_URL, schema: "public", max: 1 });
  await admin.exec(`CREATE DATABASE ${database}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  db = openPg({ url: url.toString(), schema: "revenue", max: PARALLEL + 4 });
  await migrate(db, [kitMigrations, revenueMigrations]);
  t = await createTestRevenue(db);
  org = await t.givenOrg();
});
afterAll(async () => {
  await t?.close();
  await db?.close();
  await admin?.exec(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin?.close();
});

const settle = <T>(calls: Promise<T>[]) => Promise.allSettled(calls);

describe("concurrency on real Postgres", () => {
  it("creates exactly one deal among simultaneous creates with the same CRM id", async () => {
    const crmSourceId = `006-${randomBytes(6).toString("hex")}`;
    const results = await settle(
      Array.from({ length: PARALLEL }, (_, i) =>
        t.caller(DealService, org.orgId).createDeal({
          name: `Sync attempt ${i}`,
          accountId: org.accountId,
          stage: "Discovery",
          crmSourceId,
        }),
      ),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const problems = await Promise.all(
      results.flatMap((r) => (r.status === "rejected" ? [problemOf(Promise.reject(r.reason))] : [])),
    );
    expect(problems).toEqual(Array(PARALLEL - 1).fill("source-ref-conflict"));
    const rows = await db.query("SELECT id FROM revenue.deals WHERE org_id = $1 AND crm_source_id = $2", [
      org.orgId,
      crmSourceId,
    ]);
    expect(rows).toHaveLength(1);
  });

  it("executes simultaneous duplicates of one Idempotency-Key once and replays the rest", async () => {
    const idempotencyKey = newId("idem_");
    const caller = t.caller(DealService, org.orgId, { idempotencyKey });
    const body = { name: "Exactly once", accountId: org.accountId, stage: "Discovery" };
    const results = await Promise.all(
      Array.from({ length: PARALLEL }, () => withHeaders((o) => caller.createDeal(body, o))),
    );
    expect(new Set(results.map((r) => r.response.deal?.id)).size).toBe(1);
    expect(results.filter((r) => r.headers.get("x-idempotent-replay") === "true")).toHaveLength(PARALLEL - 1);
    const rows = await db.query("SELECT id FROM revenue.deals WHERE org_id = $1 AND name = $2", [org.orgId, body.name]);
    expect(rows).toHaveLength(1);
    const created = await db.query(
      "SELECT 1 FROM revenue.outbox WHERE type = 'revenue.deal.created' AND subject = $1",
      [results[0]?.response.deal?.id],
    );
    expect(created).toHaveLength(1);
  });

  it("creates one 8P record among simultaneous creates of the same type: one 201, the rest 200", async () => {
    const { deal } = await t.caller(DealService, org.orgId).createDeal({
      name: "Concurrent 8P",
      accountId: org.accountId,
      stage: "Discovery",
    });
    const dealId = deal?.id ?? "";
    // Each call has its own Idempotency-Key: these are distinct requests, not replays.
    const results = await Promise.all(
      Array.from({ length: PARALLEL }, () =>
        t.caller(InsightService, org.orgId).createInsightRecord({ dealId, schemaType: "power" }),
      ),
    );
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.record?.id)).size).toBe(1);
    const rows = await db.query("SELECT id FROM revenue.insight_records WHERE deal_id = $1 AND schema_type = 'power'", [
      dealId,
    ]);
    expect(rows).toHaveLength(1);
    const created = await db.query(
      "SELECT 1 FROM revenue.outbox WHERE type = 'revenue.insight.created' AND subject = $1",
      [results[0]?.record?.id],
    );
    expect(created).toHaveLength(1);
  });

  it("lets exactly one of simultaneous PATCHes of different deals take the same CRM id", async () => {
    const caller = t.caller(DealService, org.orgId);
    const dealIds: string[] = [];
    for (let i = 0; i < PARALLEL; i++) {
      const { deal } = await caller.createDeal({
        name: `Patch race ${i}`,
        accountId: org.accountId,
        stage: "Discovery",
      });
      dealIds.push(deal?.id ?? "");
    }
    const crmSourceId = `006-${randomBytes(6).toString("hex")}`;
    const results = await settle(
      dealIds.map((dealId) => t.caller(DealService, org.orgId).updateDeal({ dealId, crmSourceId })),
    );
    const winners = results.flatMap((r) => (r.status === "fulfilled" ? [r.value.deal?.id] : []));
    expect(winners).toHaveLength(1);
    const problems = await Promise.all(
      results.flatMap((r) => (r.status === "rejected" ? [problemDetailOf(Promise.reject(r.reason))] : [])),
    );
    expect(problems).toEqual(
      Array(PARALLEL - 1).fill(
        expect.objectContaining({
          name: "source-ref-conflict",
          extensions: expect.objectContaining({ sourceType: "crm", sourceId: crmSourceId }),
        }),
      ),
    );
    const rows = await db.query<{ id: string }>(
      "SELECT id FROM revenue.deals WHERE org_id = $1 AND crm_source_id = $2",
      [org.orgId, crmSourceId],
    );
    expect(rows.map((r) => r.id)).toEqual(winners);
  });
});
