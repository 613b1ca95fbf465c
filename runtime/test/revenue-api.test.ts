import { gatewayConfigSpec } from "@platform/gateway/config";
import { ManualClock } from "@platform/kit/clock";
import { loadConfig } from "@platform/kit/config";
import { TOPICS } from "@platform/kit/events";
import { createLogger } from "@platform/kit/logger";
import { decodeEvent } from "@platform/kit/outbox";
import { eventually } from "@platform/kit/testing";
import { REVENUE_SANDBOX, sandboxInsightId } from "@platform/revenue/server";
import {
  SCHEDULING_SANDBOX,
  sandboxAccountId,
  sandboxContactId,
  sandboxDealId,
  sandboxMeetingId,
  sandboxOrgId,
  sandboxQnaId,
} from "@platform/sandbox";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createEmbeddedPlatform, type EmbeddedPlatform } from "../src/platform.js";

// Deals, Q&As and 8P insights end to end on the embedded platform: gateway → revenue →
// PGlite, with crm-data's references and scheduling's meeting events.
const DOCS = "https://docs.revenue-test.example";
const API = "/api/v1alpha1";
const SEED = "revenue-api-test";
const clock = new ManualClock(new Date("2026-03-02T10:00:00Z"));

let platform: EmbeddedPlatform;
const keys: Record<string, string> = {};
const tokenIds: Record<string, string> = {};
let n = 0;
const events: { type: string; subject?: string; data: unknown }[] = [];

type Init = { headers?: Record<string, string>; body?: unknown; as?: string };
function call(method: "GET" | "POST" | "PATCH", url: string, init: Init = {}) {
  return platform.app.inject({
    method,
    url: `${API}${url}`,
    headers: {
      "x-platform-api-key": keys[init.as ?? "acme-full"] ?? "",
      ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
      ...(method !== "GET" ? { "idempotency-key": `k-${++n}` } : {}),
      ...init.headers,
    },
    ...(init.body !== undefined ? { payload: JSON.stringify(init.body) } : {}),
  });
}
const problemType = (name: string) => `${DOCS}/platform-api/errors/${name}`;
async function expectProblem(res: Awaited<ReturnType<typeof call>>, status: number, name: string, extra = {}) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers["content-type"]).toMatch(/application\/problem\+json/);
  expect(res.json()).toMatchObject({ type: problemType(name), status, ...extra });
}

const deal = (key: string) => sandboxDealId(SEED, key);
const account = (key: string) => sandboxAccountId(SEED, key);
const contact = (key: string) => sandboxContactId(SEED, key);
const meeting = (label: string) => sandboxMeetingId(SEED, label);
const ANALYTICAL = () => deal("analytical-expansion");

beforeAll(async () => {
  platform = await createEmbeddedPlatform({
    clock,
    logger: createLogger("revenue-api-test", "silent"),
    gateway: loadConfig(gatewayConfigSpec, { PLATFORM_DOCS_URL: DOCS, LOG_LEVEL: "silent" }),
    sandboxSeed: SEED,
    seedSandbox: true,
    adminSecret: "revenue-api-test-admin",
    env: {},
  });
  for (const k of await platform.sandboxKeys()) {
    keys[k.name] = k.key;
    tokenIds[k.name] = k.tokenId;
  }
  await platform.bus.subscribe({
    groupId: "revenue-test-observer",
    topics: [TOPICS.revenue],
    fromBeginning: true,
    handler: async (m) => {
      const e = decodeEvent(m);
      events.push({ type: e.type, subject: e.subject, data: e.data });
    },
  });
  // Scheduling's sandbox meetings reach revenue's projection through the bus.
  await platform.drainOutbox();
  // Every one of them, the preview booking included (Q&As and insights may name it).
  const sandboxMeetings = SCHEDULING_SANDBOX.meetings.map((m) => meeting(m.label));
  await eventually("sandbox meetings projected", async () => {
    const rows = (await platform.dbs.revenue?.query<{ id: string }>("SELECT id FROM revenue.meetings")) ?? [];
    const projected = new Set(rows.map((r) => r.id));
    return sandboxMeetings.every((id) => projected.has(id)) ? rows : undefined;
  });
});
afterAll(() => platform.close());
beforeEach(() => clock.advance(61_000));

describe("deals", () => {
  it("lists the sandbox deals in list view, filters by repeatable stage and account, pages and sorts", async () => {
    const all = await call("GET", "/deals?limit=100");
    expect(all.statusCode).toBe(200);
    const items = all.json().items as Record<string, unknown>[];
    const acmeDeals = REVENUE_SANDBOX.deals.filter((d) => d.org === "acme");
    expect(items.map((d) => d.id)).toEqual(expect.arrayContaining(acmeDeals.map((d) => deal(d.key))));
    const analytical = items.find((d) => d.id === ANALYTICAL());
    expect(Object.keys(analytical ?? {}).sort()).toEqual(
      [
        "id",
        "orgId",
        "name",
        "stage",
        "amount",
        "closeDate",
        "account",
        "owner",
        "sourceRefs",
        "createdAt",
        "updatedAt",
      ].sort(),
    );
    expect(analytical).toMatchObject({
      orgId: sandboxOrgId(SEED, "acme"),
      stage: "Negotiation",
      amount: { value: 240000, currency: "USD" },
      closeDate: "2026-04-30",
      account: { id: account("analytical"), name: "Analytical Engines Ltd" },
      owner: { displayName: "Casey Morgan" },
      sourceRefs: { crm: { id: "006Acme000000001AAA" } },
    });
    const madras = items.find((d) => d.id === deal("madras-research"));
    expect(madras).toMatchObject({ amount: null, closeDate: null, sourceRefs: {} });

    const closed = (await call("GET", "/deals?stage=Won&stage=Lost&sort=name")).json().items as { stage: string }[];
    expect(closed.map((d) => d.stage)).toEqual(["Won", "Lost"]);
    const won = (await call("GET", "/deals?stage=Won")).json().items as { id: string }[];
    expect(won.map((d) => d.id)).toEqual([deal("bletchley-cryptanalysis")]);
    const byAccount = (await call("GET", `/deals?accountId=${account("cobol")}`)).json().items as { id: string }[];
    expect(byAccount.map((d) => d.id)).toEqual([deal("cobol-migration")]);
    const closing = (
      await call("GET", "/deals?closingAfter=2026-04-01&closingBefore=2026-05-31&sort=closeDate")
    ).json();
    expect(closing.items.map((d: { closeDate: string }) => d.closeDate)).toEqual(["2026-04-30", "2026-05-15"]);
    const searched = (await call("GET", "/deals?search=ENGINES")).json().items as { id: string }[];
    expect(searched.map((d) => d.id)).toEqual([ANALYTICAL()]);

    const first = (await call("GET", "/deals?sort=-amount&limit=2")).json();
    expect(first.items.map((d: { amount: { value: number } }) => d.amount.value)).toEqual([310000, 240000]);
    const second = (
      await call("GET", `/deals?sort=-amount&limit=2&cursor=${encodeURIComponent(first.nextCursor)}`)
    ).json();
    expect(second.items.map((d: { amount: { value: number } }) => d.amount.value)).toEqual([125000.5, 90000]);
    await expectProblem(
      await call("GET", `/deals?sort=name&cursor=${encodeURIComponent(first.nextCursor)}`),
      400,
      "invalid-cursor",
    );
    await expectProblem(await call("GET", "/deals?sort=stage"), 400, "invalid-sort-field", { field: "stage" });
    await expectProblem(await call("GET", "/deals?closingBefore=2026-02-30"), 400, "invalid-filter");
  });

  it("reads one deal in detail with its 8P ids, and hides other orgs' deals", async () => {
    const res = await call("GET", `/deals/${ANALYTICAL()}`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      primaryContact: { id: contact("ada-lovelace"), displayName: "Ada Lovelace" },
      schemaVersion: 2,
      customFields: { forecastCategory: "commit", pricing: { seats: 40, termMonths: 24 } },
      sourceRefs: { crm: { id: "006Acme000000001AAA", url: expect.stringContaining("https://") } },
      insightSummary: {
        profileId: sandboxInsightId(SEED, "analytical-expansion", "profile"),
        powerId: sandboxInsightId(SEED, "analytical-expansion", "power"),
        planId: null,
        processId: null,
      },
    });
    expect(body.schemaId).toMatch(/^schm_/);
    await expectProblem(await call("GET", `/deals/${deal("umbrella-wonka")}`), 404, "deal-not-found");
    await expectProblem(await call("GET", `/deals/${ANALYTICAL()}`, { as: "umbrella-full" }), 404, "deal-not-found");
    await expectProblem(await call("GET", "/deals/acct_123"), 400, "invalid-resource-id");
  });

  it("finds a deal by its CRM reference without revealing other pairs", async () => {
    const found = await call("GET", "/deals/by-source?sourceType=crm&sourceId=006Acme000000001AAA");
    expect(found.statusCode).toBe(200);
    expect(found.json().id).toBe(ANALYTICAL());
    await expectProblem(await call("GET", "/deals/by-source?sourceType=crm&sourceId=nope"), 404, "deal-not-found");
    // Umbrella's CRM id asked by Acme: the same 404 as an unknown one.
    await expectProblem(
      await call("GET", "/deals/by-source?sourceType=crm&sourceId=006Umbr000000001AAA"),
      404,
      "deal-not-found",
    );
    await expectProblem(await call("GET", "/deals/by-source?sourceType=crm"), 400, "invalid-field");
  });

  it("creates a deal once per Idempotency-Key and checks account, contact, stage, currency, fields and CRM id", async () => {
    const body = {
      name: "Analytical Engines: second site",
      accountId: account("analytical"),
      stage: "Discovery",
      amount: { value: 5000, currency: "EUR" },
      primaryContactId: contact("ada-lovelace"),
      customFields: { probability: 10, products: ["Analytics"] },
      sourceRefs: { crm: { id: "006Acme000000099AAA", url: "https://crm.example/99" } },
    };
    const headers = { "idempotency-key": "create-deal-1" };
    const created = await call("POST", "/deals", { body, headers });
    expect(created.statusCode, created.body).toBe(201);
    const dealJson = created.json();
    expect(dealJson).toMatchObject({
      stage: "Discovery",
      schemaVersion: 2,
      owner: { displayName: "Avery Stone" },
      insightSummary: { profileId: null },
    });
    const replay = await call("POST", "/deals", { body, headers });
    expect(replay.statusCode).toBe(201);
    expect(replay.headers["x-idempotent-replay"]).toBe("true");
    expect(replay.json()).toEqual(dealJson);
    await expectProblem(
      await call("POST", "/deals", { body: { ...body, name: "Other" }, headers }),
      422,
      "idempotency-key-conflict",
    );
    await expectProblem(
      await call("POST", "/deals", { body, headers: { "idempotency-key": "" } }),
      400,
      "idempotency-key-required",
    );

    const fresh = { ...body, sourceRefs: undefined };
    await expectProblem(
      await call("POST", "/deals", { body: { ...fresh, accountId: account("umbrella-wonka") } }),
      404,
      "account-not-found",
    );
    await expectProblem(
      await call("POST", "/deals", { body: { ...fresh, primaryContactId: contact("umbrella-charlie") } }),
      404,
      "contact-not-found",
    );
    await expectProblem(
      await call("POST", "/deals", { body: { ...fresh, stage: "Closed Won" } }),
      422,
      "schema-mismatch",
    );
    await expectProblem(
      await call("POST", "/deals", { body: { ...fresh, amount: { value: 5 } } }),
      422,
      "schema-mismatch",
    );
    await expectProblem(
      await call("POST", "/deals", { body: { ...fresh, customFields: { colour: "red" } } }),
      422,
      "schema-mismatch",
    );
    await expectProblem(
      await call("POST", "/deals", { body: { ...fresh, customFields: { renewal: "yes" } } }),
      422,
      "schema-mismatch",
    );
    await expectProblem(
      await call("POST", "/deals", { body: { ...fresh, sourceRefs: { crm: { id: "006Acme000000001AAA" } } } }),
      422,
      "source-ref-conflict",
    );
    await expectProblem(
      await call("POST", "/deals", { body: { ...fresh, closeDate: "2026-02-30" } }),
      400,
      "invalid-field",
    );
    await expectProblem(await call("POST", "/deals", { body: { ...fresh, id: "deal_x" } }), 400, "invalid-field", {
      field: "id",
    });
    await expectProblem(await call("POST", "/deals", { body: fresh, as: "acme-readonly" }), 403, "insufficient-scope", {
      requiredScope: "deals:write",
    });
    await platform.drainOutbox();
    await platform.bus.idle();
    expect(events.filter((e) => e.type === "revenue.deal.created" && e.subject === dealJson.id)).toHaveLength(1);
  });

  it("patches with merge semantics, bumps the schema version, and refuses closed deals", async () => {
    const id = deal("madras-research");
    const before = (await call("GET", `/deals/${id}`)).json();
    expect(before.schemaVersion).toBe(1);
    const patched = await call("PATCH", `/deals/${id}`, {
      body: {
        stage: "Qualification",
        customFields: { probability: 25, forecastCategory: null },
        closeDate: "2026-09-30",
      },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({
      stage: "Qualification",
      closeDate: "2026-09-30",
      schemaVersion: 2,
      customFields: { probability: 25 },
      primaryContact: { id: contact("srinivasa-ramanujan") },
    });
    expect(patched.json().customFields).not.toHaveProperty("forecastCategory");
    const cleared = await call("PATCH", `/deals/${id}`, { body: { closeDate: null, primaryContactId: null } });
    expect(cleared.json()).toMatchObject({ closeDate: null, primaryContact: null, customFields: { probability: 25 } });

    await expectProblem(
      await call("PATCH", `/deals/${deal("bletchley-cryptanalysis")}`, { body: { name: "x" } }),
      409,
      "deal-closed",
    );
    await expectProblem(
      await call("PATCH", `/deals/${deal("cobol-migration")}`, { body: { stage: "Discovery" } }),
      409,
      "deal-closed",
    );
    await expectProblem(
      await call("PATCH", `/deals/${deal("umbrella-wonka")}`, { body: { name: "x" } }),
      404,
      "deal-not-found",
    );
    await expectProblem(await call("PATCH", `/deals/${id}`, { body: { stage: "Nope" } }), 422, "schema-mismatch");
    await expectProblem(
      await call("PATCH", `/deals/${id}`, { body: { accountId: account("umbrella-wonka") } }),
      404,
      "account-not-found",
    );
  });

  it("lists the account's deals (deals:read and accounts:read) and the deal's meetings with hasTranscript", async () => {
    const res = await call("GET", `/accounts/${account("analytical")}/deals`, { as: "acme-readonly" });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().items.map((d: { id: string }) => d.id)).toContain(ANALYTICAL());
    await expectProblem(await call("GET", `/accounts/${account("umbrella-wonka")}/deals`), 404, "account-not-found");
    await expectProblem(
      await call("GET", `/accounts/${account("analytical")}/deals`, { as: "acme-noscopes" }),
      403,
      "insufficient-scope",
      { requiredScope: "accounts:read" },
    );

    const meetings = await call("GET", `/deals/${ANALYTICAL()}/meetings`);
    expect(meetings.statusCode, meetings.body).toBe(200);
    const items = meetings.json().items as { meetingId: string; hasTranscript: boolean }[];
    expect(items.map((m) => m.meetingId)).toEqual([meeting("acme-intro-completed")]);
    for (const m of items) {
      const transcript = await call("GET", `/scheduled-meetings/${m.meetingId}/transcript`);
      expect(transcript.statusCode === 200, `transcript of ${m.meetingId}`).toBe(m.hasTranscript);
    }
    const bletchley = (await call("GET", `/deals/${deal("bletchley-cryptanalysis")}/meetings`)).json();
    expect(bletchley.items.map((m: { meetingId: string }) => m.meetingId)).toEqual([
      meeting("acme-intro-upcoming-amer"),
    ]);
    const canceled = (await call("GET", `/deals/${deal("cobol-migration")}/meetings`)).json();
    expect(canceled.items).toMatchObject([{ meetingId: meeting("acme-intro-canceled"), status: "canceled" }]);
    const madras = (await call("GET", `/deals/${deal("madras-research")}/meetings`)).json();
    expect(madras.items).toMatchObject([{ meetingId: meeting("acme-intro-upcoming-apac"), status: "scheduled" }]);
    // The preview demo with Katherine Johnson is not linked.
    expect((await call("GET", `/deals/${deal("orbital-trajectory")}/meetings`)).json().items).toEqual([]);
    const none = (await call("GET", `/deals/${deal("babbage-holdings")}/meetings`)).json();
    expect(none).toEqual({ items: [], nextCursor: null });
    await expectProblem(await call("GET", `/deals/${deal("umbrella-wonka")}/meetings`), 404, "deal-not-found");
  });
});

describe("Q&As", () => {
  it("shows the backlog in six buckets, also filtered by meeting", async () => {
    const backlog = (await call("GET", `/deals/${ANALYTICAL()}/qnas`)).json();
    for (const direction of ["discovery", "rfi"]) {
      for (const state of ["open", "answered", "dismissed"]) {
        expect(backlog[direction][state].count, `${direction}.${state}`).toBeGreaterThanOrEqual(1);
        expect(backlog[direction][state].items.every((q: { state: string }) => q.state === state)).toBe(true);
      }
    }
    const item = backlog.rfi.open.items.find((q: { id: string }) => q.id === sandboxQnaId(SEED, "sso"));
    expect(item).toMatchObject({
      direction: "rfi",
      linkedInsight: null,
      contact: { id: contact("ada-lovelace"), displayName: "Ada Lovelace" },
      answerText: null,
      occurrences: [{ meetingId: meeting("acme-intro-completed"), source: "ai-agent" }],
    });
    const forMeeting = (
      await call("GET", `/deals/${ANALYTICAL()}/qnas/meetings/${meeting("acme-intro-completed")}`)
    ).json();
    expect(forMeeting.rfi.open.count).toBe(backlog.rfi.open.count);
    const unrelated = (
      await call("GET", `/deals/${ANALYTICAL()}/qnas/meetings/${meeting("acme-intro-canceled")}`)
    ).json();
    expect(unrelated.discovery.open).toEqual({ count: 0, items: [] });
    expect(unrelated.rfi.dismissed).toEqual({ count: 0, items: [] });
    await expectProblem(
      await call("GET", `/deals/${ANALYTICAL()}/qnas/meetings/mtg_0000000000000000000000zz`),
      404,
      "meeting-not-found",
    );
    await expectProblem(await call("GET", `/deals/${deal("umbrella-wonka")}/qnas`), 404, "deal-not-found");
  });

  it("creates items of both directions and refuses invalid shapes", async () => {
    const occurrences = [{ meetingId: meeting("acme-intro-completed"), occurredAt: "2026-02-27T10:05:00Z" }];
    const url = `/deals/${ANALYTICAL()}/qnas`;
    const created = await call("POST", url, {
      body: {
        direction: "discovery",
        questionText: "What is the rollout date?",
        linkedInsight: { schemaType: "plan", fieldKey: "targetSignDate" },
        occurrences,
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ state: "open", importance: "medium", contact: null, answerText: null });
    const rfi = await call("POST", url, {
      body: {
        direction: "rfi",
        questionText: "Is there an on-premise option?",
        contactId: contact("ada-lovelace"),
        importance: "high",
        occurrences,
      },
    });
    expect(rfi.statusCode).toBe(201);
    await expectProblem(
      await call("POST", url, { body: { direction: "discovery", questionText: "q", occurrences } }),
      422,
      "qna-shape-invalid",
    );
    await expectProblem(
      await call("POST", url, { body: { direction: "rfi", questionText: "q", occurrences } }),
      422,
      "qna-shape-invalid",
    );
    await expectProblem(
      await call("POST", url, {
        body: {
          direction: "discovery",
          questionText: "q",
          linkedInsight: { schemaType: "plan", fieldKey: "colour" },
          occurrences,
        },
      }),
      422,
      "insight-field-invalid",
    );
    await expectProblem(
      await call("POST", url, {
        body: { direction: "rfi", questionText: "q", contactId: contact("umbrella-charlie"), occurrences },
      }),
      404,
      "contact-not-found",
    );
    await expectProblem(
      await call("POST", url, {
        body: {
          direction: "rfi",
          questionText: "q",
          contactId: contact("ada-lovelace"),
          occurrences: [{ ...occurrences[0], meetingId: "mtg_0000000000000000000000zz" }],
        },
      }),
      404,
      "meeting-not-found",
    );
    await expectProblem(
      await call("POST", url, {
        body: { direction: "rfi", questionText: "q", contactId: contact("ada-lovelace"), occurrences },
        headers: { "idempotency-key": "" },
      }),
      400,
      "idempotency-key-required",
    );
  });

  it("answers by confidence and moves items only as the state table allows", async () => {
    const url = `/deals/${ANALYTICAL()}/qnas`;
    const occurrences = [{ meetingId: meeting("acme-intro-completed"), occurredAt: "2026-02-27T10:05:00Z" }];
    const { id } = (
      await call("POST", url, {
        body: { direction: "rfi", questionText: "Can we pay yearly?", contactId: contact("ada-lovelace"), occurrences },
      })
    ).json();
    const draft = await call("POST", `/qnas/${id}/answer`, {
      body: { answerText: "Probably", source: { type: "grounding-doc", documentId: "doc-7" } },
    });
    expect(draft.statusCode, draft.body).toBe(200);
    expect(draft.json()).toMatchObject({ state: "open", answerText: "Probably" });
    await expectProblem(
      await call("POST", `/qnas/${id}/answer`, { body: { answerText: "x", source: { type: "meeting" } } }),
      422,
      "answer-source-invalid",
    );
    await expectProblem(
      await call("POST", `/qnas/${id}/answer`, { body: { answerText: "x", source: { type: "grounding-doc" } } }),
      422,
      "answer-source-invalid",
    );
    const answered = await call("POST", `/qnas/${id}/answer`, {
      body: {
        answerText: "Yes, yearly in advance",
        source: { type: "meeting", meetingId: meeting("acme-intro-completed") },
        confidence: 0.9,
      },
    });
    expect(answered.json()).toMatchObject({ state: "answered", answerText: "Yes, yearly in advance" });

    const move = (target: string) => call("POST", `/qnas/${id}/transitions/${target}`, { body: { reason: "test" } });
    await expectProblem(await move("answered"), 409, "qna-transition-invalid", { currentState: "answered" });
    expect((await move("open")).json().state).toBe("open");
    expect((await move("dismissed")).json().state).toBe("dismissed");
    await expectProblem(await move("answered"), 409, "qna-transition-invalid", { currentState: "dismissed" });
    await expectProblem(
      await call("POST", `/qnas/${id}/answer`, { body: { answerText: "x", source: { type: "manual" } } }),
      409,
      "qna-transition-invalid",
      {
        currentState: "dismissed",
      },
    );
    expect((await move("open")).json().state).toBe("open");
    expect((await move("answered")).json().state).toBe("answered");
    expect((await move("dismissed")).json().state).toBe("dismissed");
    await expectProblem(await move("closed"), 400, "invalid-target-state");
    await expectProblem(
      await call("POST", "/qnas/qna_0000000000000000000000zz/transitions/open"),
      404,
      "qna-item-not-found",
    );
    expect((await call("GET", `/qnas/${id}`)).json().state).toBe("dismissed");
    await expectProblem(await call("GET", "/qnas/qna_0000000000000000000000zz"), 404, "qna-item-not-found");
    await expectProblem(
      await call("GET", `/qnas/${sandboxQnaId(SEED, "sso")}`, { as: "umbrella-full" }),
      404,
      "qna-item-not-found",
    );
  });
});

describe("8P insights", () => {
  it("shows all eight records, null where absent, one by type and one by id", async () => {
    const all = (await call("GET", `/deals/${ANALYTICAL()}/insights`)).json();
    expect(Object.keys(all).sort()).toEqual(
      ["dealId", "profile", "problem", "pain", "power", "position", "phases", "process", "plan"].sort(),
    );
    expect(all.position).toBeNull();
    expect(all.problem.fields.problemStatement[0]).toMatchObject({
      importance: "high",
      rationale: "Raised twice in the intro call.",
      capturedFrom: { meetingId: meeting("acme-intro-completed"), chunkId: null },
      capturedBy: { type: "ai-agent", agentName: "deal-intel-assistant" },
    });
    const power = (await call("GET", `/deals/${ANALYTICAL()}/insights/power`)).json();
    expect(power.fields.budgetHolder).toEqual([]);
    expect((await call("GET", `/insights/${power.id}`)).json()).toEqual(power);
    await expectProblem(await call("GET", `/deals/${ANALYTICAL()}/insights/price`), 400, "invalid-schema-type");
    await expectProblem(await call("GET", `/deals/${ANALYTICAL()}/insights/position`), 404, "insight-record-not-found");
    await expectProblem(await call("GET", `/insights/${ANALYTICAL()}`), 400, "invalid-resource-id");
    await expectProblem(
      await call("GET", `/insights/${power.id}`, { as: "umbrella-full" }),
      404,
      "insight-record-not-found",
    );
  });

  it("creates records idempotently (201 then 200), appends typed items and closes linked discovery items", async () => {
    const url = `/deals/${ANALYTICAL()}/insights/position`;
    const created = await call("POST", url);
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().fields).toEqual({ alternatives: [], differentiators: [] });
    const again = await call("POST", url, { body: {} });
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(created.json().id);
    await expectProblem(await call("POST", `/deals/${ANALYTICAL()}/insights/price`), 400, "invalid-schema-type");
    await expectProblem(
      await call("POST", `/deals/${ANALYTICAL()}/insights/plan`, { body: { schemaId: "schm_nope" } }),
      422,
      "schema-not-found",
    );
    await expectProblem(await call("POST", `/deals/${deal("umbrella-wonka")}/insights/plan`), 404, "deal-not-found");

    const append = (fieldKey: string, body: object) => call("POST", `${url}/fields/${fieldKey}`, { body });
    const one = await append("alternatives", {
      value: ["Jacquard Looms"],
      capturedFrom: { meetingId: meeting("acme-intro-completed") },
    });
    expect(one.statusCode, one.body).toBe(200);
    const two = await append("alternatives", {
      value: ["Build in-house"],
      importance: "low",
      rationale: "Mentioned once",
    });
    expect(two.json().fields.alternatives.map((i: { value: string[] }) => i.value)).toEqual([
      ["Jacquard Looms"],
      ["Build in-house"],
    ]);
    expect(two.json().fields.alternatives[0]).toMatchObject({
      importance: "medium",
      capturedFrom: { meetingId: meeting("acme-intro-completed") },
    });
    await expectProblem(await append("alternatives", { value: "not a list" }), 422, "insight-field-invalid");
    await expectProblem(await append("colour", { value: "red" }), 422, "insight-field-invalid");
    await expectProblem(
      await append("differentiators", { value: "x", capturedFrom: { meetingId: "mtg_0000000000000000000000zz" } }),
      404,
      "meeting-not-found",
    );
    await expectProblem(
      await call("POST", `/deals/${ANALYTICAL()}/insights/process/fields/securityReview`, { body: { value: true } }),
      404,
      "insight-record-not-found",
    );

    // The sandbox's open discovery item about the budget holder is linked to power.budgetHolder.
    const budget = sandboxQnaId(SEED, "budget-holder");
    expect((await call("GET", `/qnas/${budget}`)).json().state).toBe("open");
    const closed = await call("POST", `/deals/${ANALYTICAL()}/insights/power/fields/budgetHolder`, {
      body: { value: "Ada Lovelace" },
    });
    expect(closed.statusCode).toBe(200);
    expect((await call("GET", `/qnas/${budget}`)).json()).toMatchObject({
      state: "answered",
      answerText: "Ada Lovelace",
    });

    const summary = (await call("GET", `/deals/${ANALYTICAL()}`)).json().insightSummary;
    expect(summary.positionId).toBe(created.json().id);
    await platform.drainOutbox();
    await platform.bus.idle();
    const types = new Set(events.map((e) => e.type));
    for (const t of [
      "revenue.insight.created",
      "revenue.insight.item-appended",
      "revenue.qna.updated",
      "revenue.qna.created",
      "revenue.deal.updated",
    ]) {
      expect(types.has(t), t).toBe(true);
    }
  });
});

describe("optional bodies", () => {
  it("accept no body or an object, and refuse unknown fields and non-objects", async () => {
    const budget = sandboxQnaId(SEED, "punch-cards");
    const reopened = await call("POST", `/qnas/${budget}/transitions/open`);
    expect(reopened.statusCode, reopened.body).toBe(200);
    await expectProblem(
      await call("POST", `/qnas/${budget}/transitions/dismissed`, { body: { why: "x" } }),
      400,
      "invalid-field",
      {
        field: "why",
      },
    );
    await expectProblem(
      await call("POST", `/qnas/${budget}/transitions/dismissed`, { body: [1] }),
      400,
      "invalid-field",
    );
    await expectProblem(
      await call("POST", `/deals/${ANALYTICAL()}/insights/plan`, { body: { schema: "x" } }),
      400,
      "invalid-field",
    );
  });
});

// An id of the right prefix and shape that names nothing.
const unknownId = (prefix: string) => `${prefix}0000000000000000000000zz`;
const occurredIn = (label: string) => [{ meetingId: meeting(label), occurredAt: "2026-02-27T10:05:00Z" }];

describe("deal PATCH errors, replays and their order", () => {
  async function freshDeal(name: string) {
    const res = await call("POST", "/deals", { body: { name, accountId: account("analytical"), stage: "Discovery" } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as string;
  }

  it("refuses another org's contact and a CRM id another deal has, with the problem's members", async () => {
    const id = await freshDeal("PATCH errors");
    await expectProblem(
      await call("PATCH", `/deals/${id}`, { body: { primaryContactId: contact("umbrella-charlie") } }),
      404,
      "contact-not-found",
    );
    await expectProblem(
      await call("PATCH", `/deals/${id}`, { body: { sourceRefs: { crm: { id: "006Acme000000001AAA" } } } }),
      422,
      "source-ref-conflict",
      { sourceType: "crm", sourceId: "006Acme000000001AAA" },
    );
    // Neither refusal changed the deal.
    expect((await call("GET", `/deals/${id}`)).json()).toMatchObject({ primaryContact: null, sourceRefs: {} });
  });

  it("replays a PATCH per Idempotency-Key, refuses the key with another body, and requires a key", async () => {
    const id = await freshDeal("PATCH replay");
    const headers = { "idempotency-key": `patch-replay-${id}` };
    const first = await call("PATCH", `/deals/${id}`, { body: { name: "Renamed once" }, headers });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers["x-idempotent-replay"]).toBeUndefined();
    // A change in between: the replay still answers what the first request got.
    const between = await call("PATCH", `/deals/${id}`, { body: { name: "Renamed twice" } });
    expect(between.statusCode).toBe(200);
    const replay = await call("PATCH", `/deals/${id}`, { body: { name: "Renamed once" }, headers });
    expect(replay.statusCode).toBe(200);
    expect(replay.headers["x-idempotent-replay"]).toBe("true");
    expect(replay.json()).toEqual(first.json());
    expect((await call("GET", `/deals/${id}`)).json().name).toBe("Renamed twice");
    await expectProblem(
      await call("PATCH", `/deals/${id}`, { body: { name: "Something else" }, headers }),
      422,
      "idempotency-key-conflict",
    );
    // The spec requires Idempotency-Key on PATCH /deals; the gateway refuses a missing or empty one.
    await expectProblem(
      await call("PATCH", `/deals/${id}`, { body: { name: "No key" }, headers: { "idempotency-key": "" } }),
      400,
      "idempotency-key-required",
    );
  });

  it("closes a deal moved to Won: any PATCH is then 409 deal-closed, even one naming an unknown account", async () => {
    const id = await freshDeal("Won by PATCH");
    const won = await call("PATCH", `/deals/${id}`, { body: { stage: "Won" } });
    expect(won.statusCode, won.body).toBe(200);
    expect(won.json().stage).toBe("Won");
    for (const body of [
      { name: "Reopened?" },
      { stage: "Discovery" },
      { customFields: { probability: 100 } },
      { accountId: unknownId("acct_") },
      { accountId: account("umbrella-wonka") },
      { primaryContactId: unknownId("cont_") },
    ]) {
      await expectProblem(await call("PATCH", `/deals/${id}`, { body }), 409, "deal-closed", { stage: "Won" });
    }
  });

  it("answers deal-not-found for an unknown deal before looking at the account the body names", async () => {
    await expectProblem(
      await call("PATCH", `/deals/${unknownId("deal_")}`, { body: { accountId: unknownId("acct_") } }),
      404,
      "deal-not-found",
    );
    await expectProblem(
      await call("PATCH", `/deals/${deal("umbrella-wonka")}`, { body: { primaryContactId: unknownId("cont_") } }),
      404,
      "deal-not-found",
    );
  });
});

describe("Q&A errors, defaults and shape", () => {
  it("answers exactly the spec's Q&A fields", async () => {
    const res = await call("GET", `/qnas/${sandboxQnaId(SEED, "sso")}`);
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json()).sort()).toEqual(
      [
        "id",
        "direction",
        "state",
        "questionText",
        "answerText",
        "importance",
        "linkedInsight",
        "contact",
        "occurrences",
        "createdAt",
        "updatedAt",
      ].sort(),
    );
    const backlog = (await call("GET", `/deals/${ANALYTICAL()}/qnas`)).json();
    expect(backlog.dealId).toBe(ANALYTICAL());
    expect(backlog.rfi.open.items[0]).not.toHaveProperty("dealId");
  });

  it("404s a create on an unknown deal and an answer to an unknown item", async () => {
    const body = {
      direction: "rfi",
      questionText: "Any item?",
      contactId: contact("ada-lovelace"),
      occurrences: occurredIn("acme-intro-completed"),
    };
    await expectProblem(await call("POST", `/deals/${unknownId("deal_")}/qnas`, { body }), 404, "deal-not-found");
    await expectProblem(await call("POST", `/deals/${deal("umbrella-wonka")}/qnas`, { body }), 404, "deal-not-found");
    await expectProblem(
      await call("POST", `/qnas/${unknownId("qna_")}/answer`, {
        body: { answerText: "x", source: { type: "manual" } },
      }),
      404,
      "qna-item-not-found",
    );
  });

  it("refuses an unknown direction and an item without occurrences as qna-shape-invalid", async () => {
    const url = `/deals/${ANALYTICAL()}/qnas`;
    const rfi = {
      questionText: "q",
      contactId: contact("ada-lovelace"),
      occurrences: occurredIn("acme-intro-completed"),
    };
    await expectProblem(await call("POST", url, { body: { ...rfi, direction: "sideways" } }), 422, "qna-shape-invalid");
    await expectProblem(
      await call("POST", url, { body: { ...rfi, direction: "rfi", occurrences: [] } }),
      422,
      "qna-shape-invalid",
    );
    await expectProblem(
      await call("POST", url, {
        body: {
          direction: "discovery",
          questionText: "q",
          linkedInsight: { schemaType: "plan", fieldKey: "targetSignDate" },
          occurrences: [],
        },
      }),
      422,
      "qna-shape-invalid",
    );
  });

  it("refuses open → open with 409 and currentState", async () => {
    const created = await call("POST", `/deals/${ANALYTICAL()}/qnas`, {
      body: {
        direction: "rfi",
        questionText: "Stay open?",
        contactId: contact("ada-lovelace"),
        occurrences: occurredIn("acme-intro-completed"),
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    await expectProblem(
      await call("POST", `/qnas/${created.json().id}/transitions/open`),
      409,
      "qna-transition-invalid",
      { currentState: "open" },
    );
  });

  it("defaults the confidence per source type: 1.0 manual, 0.5 grounding-doc and external, 0.8/0.6 meeting", async () => {
    const cases = [
      { source: { type: "manual" }, confidence: 1, state: "answered" },
      { source: { type: "grounding-doc", documentId: "doc-1" }, confidence: 0.5, state: "open" },
      { source: { type: "external" }, confidence: 0.5, state: "open" },
      {
        source: { type: "meeting", meetingId: meeting("acme-intro-completed"), chunkId: "chunk-3" },
        confidence: 0.8,
        state: "answered",
      },
      // The meeting as a whole scores exactly the threshold: it answers.
      { source: { type: "meeting", meetingId: meeting("acme-intro-completed") }, confidence: 0.6, state: "answered" },
    ];
    for (const c of cases) {
      const created = await call("POST", `/deals/${ANALYTICAL()}/qnas`, {
        body: {
          direction: "rfi",
          questionText: `Answered from ${c.source.type}?`,
          contactId: contact("ada-lovelace"),
          occurrences: occurredIn("acme-intro-completed"),
        },
      });
      expect(created.statusCode, created.body).toBe(201);
      const id = created.json().id as string;
      const answered = await call("POST", `/qnas/${id}/answer`, {
        body: { answerText: `From ${c.source.type}`, source: c.source },
      });
      expect(answered.statusCode, answered.body).toBe(200);
      // Below 0.6 the answer stays as a draft on the open item.
      expect(answered.json(), c.source.type).toMatchObject({ state: c.state, answerText: `From ${c.source.type}` });
      // The REST item carries no confidence; the stored answer shows the default applied.
      const [row] =
        (await platform.dbs.revenue?.query<{ confidence: string }>(
          "SELECT answer ->> 'confidence' AS confidence FROM revenue.qnas WHERE id = $1",
          [id],
        )) ?? [];
      expect(Number(row?.confidence), c.source.type).toBe(c.confidence);
    }
  });
});

describe("preview bookings", () => {
  const PREVIEW = "acme-demo-upcoming";
  const ORBITAL = () => deal("orbital-trajectory");

  it("are meetings Q&As and insights may name, though never linked to the deal", async () => {
    // The sandbox meeting is a preview booking as scheduling reports it.
    const scheduled = await call("GET", `/scheduled-meetings/${meeting(PREVIEW)}`);
    expect(scheduled.statusCode, scheduled.body).toBe(200);
    expect(scheduled.json().smartScheduling).toMatchObject({ preview: true });

    const created = await call("POST", `/deals/${ORBITAL()}/qnas`, {
      body: {
        direction: "rfi",
        questionText: "Which trajectories will the demo cover?",
        contactId: contact("katherine-johnson"),
        occurrences: [{ meetingId: meeting(PREVIEW), occurredAt: "2026-03-06T09:10:00Z" }],
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    expect(created.json().occurrences).toMatchObject([{ meetingId: meeting(PREVIEW) }]);

    const forPreview = await call("GET", `/deals/${ORBITAL()}/qnas/meetings/${meeting(PREVIEW)}`);
    expect(forPreview.statusCode, forPreview.body).toBe(200);
    expect(forPreview.json().rfi.open).toMatchObject({ count: 1, items: [{ id }] });

    const answered = await call("POST", `/qnas/${id}/answer`, {
      body: { answerText: "Lunar orbits", source: { type: "meeting", meetingId: meeting(PREVIEW) }, confidence: 0.9 },
    });
    expect(answered.statusCode, answered.body).toBe(200);
    expect(answered.json().state).toBe("answered");

    expect((await call("POST", `/deals/${ORBITAL()}/insights/profile`)).statusCode).toBe(201);
    const appended = await call("POST", `/deals/${ORBITAL()}/insights/profile/fields/companyOverview`, {
      body: { value: "Computes trajectories for crewed flights.", capturedFrom: { meetingId: meeting(PREVIEW) } },
    });
    expect(appended.statusCode, appended.body).toBe(200);
    expect(appended.json().fields.companyOverview).toMatchObject([{ capturedFrom: { meetingId: meeting(PREVIEW) } }]);

    // Still no deal link: preview bookings stay out of the CRM-sync side.
    expect((await call("GET", `/deals/${ORBITAL()}/meetings`)).json().items).toEqual([]);
  });
});

describe("8P insight replays, 404s and authors", () => {
  const BABBAGE = () => deal("babbage-holdings");

  it("replays a create and an append per Idempotency-Key, and refuses the key with another body", async () => {
    const url = `/deals/${BABBAGE()}/insights/pain`;
    const createKey = { "idempotency-key": "insight-create-replay" };
    const created = await call("POST", url, { headers: createKey });
    expect(created.statusCode, created.body).toBe(201);
    const createReplay = await call("POST", url, { headers: createKey });
    expect(createReplay.statusCode).toBe(201);
    expect(createReplay.headers["x-idempotent-replay"]).toBe("true");
    expect(createReplay.json()).toEqual(created.json());

    const appendUrl = `${url}/fields/consequences`;
    const appendKey = { "idempotency-key": "insight-append-replay" };
    const body = { value: "Ledgers reconciled by hand every quarter." };
    const appended = await call("POST", appendUrl, { body, headers: appendKey });
    expect(appended.statusCode, appended.body).toBe(200);
    const replay = await call("POST", appendUrl, { body, headers: appendKey });
    expect(replay.statusCode).toBe(200);
    expect(replay.headers["x-idempotent-replay"]).toBe("true");
    expect(replay.json()).toEqual(appended.json());
    // Executed once: one item, not two.
    expect((await call("GET", `/deals/${BABBAGE()}/insights/pain`)).json().fields.consequences).toHaveLength(1);
    await expectProblem(
      await call("POST", appendUrl, { body: { value: "Another consequence" }, headers: appendKey }),
      422,
      "idempotency-key-conflict",
    );
    await expectProblem(
      await call("POST", url, { body: { schemaId: "schm_other" }, headers: createKey }),
      422,
      "idempotency-key-conflict",
    );
  });

  it("404s the insights of an unknown or another org's deal", async () => {
    for (const id of [unknownId("deal_"), deal("umbrella-wonka")]) {
      await expectProblem(await call("GET", `/deals/${id}/insights`), 404, "deal-not-found");
      await expectProblem(await call("GET", `/deals/${id}/insights/profile`), 404, "deal-not-found");
    }
  });

  it("records who appended: the integration behind the token", async () => {
    const url = `/deals/${BABBAGE()}/insights/power`;
    expect((await call("POST", url)).statusCode).toBe(201);
    const res = await call("POST", `${url}/fields/decisionMakers`, { body: { value: ["Charles Babbage"] } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().fields.decisionMakers).toEqual([
      expect.objectContaining({
        value: ["Charles Babbage"],
        importance: "medium",
        rationale: null,
        capturedFrom: null,
        capturedBy: { type: "ai-agent", agentName: `integration:${tokenIds["acme-full"]}` },
      }),
    ]);
  });
});

describe("revenue events", () => {
  const ofSubject = (type: string, subject: string) => events.filter((e) => e.type === type && e.subject === subject);

  it("publish each Q&A and insight change once, with the resource as the subject", async () => {
    const created = await call("POST", `/deals/${deal("babbage-holdings")}/qnas`, {
      body: {
        direction: "rfi",
        questionText: "Who signs?",
        contactId: contact("ada-lovelace"),
        occurrences: occurredIn("acme-intro-completed"),
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const qnaId = created.json().id as string;
    const answered = await call("POST", `/qnas/${qnaId}/answer`, {
      body: { answerText: "The board", source: { type: "manual" } },
    });
    expect(answered.statusCode).toBe(200);
    const url = `/deals/${deal("babbage-holdings")}/insights/plan`;
    const record = await call("POST", url);
    expect(record.statusCode, record.body).toBe(201);
    const recordId = record.json().id as string;
    // The 200 repeat creates nothing, so publishes nothing.
    expect((await call("POST", url)).statusCode).toBe(200);
    const appended = await call("POST", `${url}/fields/targetSignDate`, { body: { value: "2026-06-30" } });
    expect(appended.statusCode, appended.body).toBe(200);

    await platform.drainOutbox();
    await platform.bus.idle();
    expect(ofSubject("revenue.qna.created", qnaId)).toHaveLength(1);
    expect(ofSubject("revenue.qna.updated", qnaId)).toMatchObject([
      { data: { qna: { id: qnaId, state: "answered" }, previousState: "open", cause: "answer" } },
    ]);
    expect(ofSubject("revenue.insight.created", recordId)).toMatchObject([{ data: { record: { id: recordId } } }]);
    expect(ofSubject("revenue.insight.item-appended", recordId)).toMatchObject([
      { data: { recordId, dealId: deal("babbage-holdings"), schemaType: "plan", fieldKey: "targetSignDate" } },
    ]);
  });
});

// Last: it adds deals to Acme, which the sandbox listings above do not expect.
describe("deal list filters and limits", () => {
  it("filters by owner", async () => {
    const all = (await call("GET", "/deals?limit=100")).json().items as { id: string; owner: { userId: string } }[];
    const ownerId = all.find((d) => d.id === ANALYTICAL())?.owner.userId ?? "";
    expect(ownerId).toMatch(/^usr_/);
    const expected = all.filter((d) => d.owner.userId === ownerId).map((d) => d.id);
    expect(expected.length).toBeLessThan(all.length);
    const owned = (await call("GET", `/deals?owner=${ownerId}&limit=100`)).json().items as { id: string }[];
    expect(owned.map((d) => d.id).sort()).toEqual(expected.sort());
    expect((await call("GET", `/deals?owner=${unknownId("usr_")}`)).json()).toEqual({ items: [], nextCursor: null });
  });

  it("clamps limit to 1..100: 0 becomes 1 and 500 becomes 100", async () => {
    const db = platform.dbs.revenue;
    if (!db) throw new Error("no revenue database");
    // Enough deals for a clamp to 100 to show: copies of a sandbox deal under fresh ids.
    const ids = Array.from({ length: 101 }, (_, i) => `deal_bulk${String(i).padStart(21, "0")}`);
    await db.query(
      `INSERT INTO revenue.deals (id, org_id, name, stage, outcome, account_id, account_name, owner_user_id,
         owner_display_name, schema_id, schema_version, created_at, updated_at)
       SELECT x.id, d.org_id, 'Bulk ' || x.id, d.stage, d.outcome, d.account_id, d.account_name, d.owner_user_id,
         d.owner_display_name, d.schema_id, d.schema_version, d.created_at, d.updated_at
       FROM unnest($1::text[]) AS x(id), revenue.deals d WHERE d.id = $2`,
      [ids, deal("babbage-holdings")],
    );
    const one = await call("GET", "/deals?limit=0");
    expect(one.statusCode, one.body).toBe(200);
    expect(one.json().items).toHaveLength(1);
    expect(one.json().nextCursor).toEqual(expect.any(String));
    const hundred = await call("GET", "/deals?limit=500");
    expect(hundred.statusCode, hundred.body).toBe(200);
    expect(hundred.json().items).toHaveLength(100);
    expect(hundred.json().nextCursor).toEqual(expect.any(String));
    await expectProblem(await call("GET", "/deals?limit=many"), 400, "invalid-field");
  });
});
