import { REVENUE_SANDBOX, sandboxInsightId } from "@platform/revenue/server";
import { sandboxOrgId } from "@platform/sandbox";
import { describe, expect, it } from "vitest";
import {
  ANALYTICAL,
  account,
  call,
  contact,
  deal,
  events,
  expectProblem,
  meeting,
  platform,
  SEED,
  unknownId,
  useRevenuePlatform,
} from "./setup.js";

// Deals: listings, reads, creates and patches (setup.ts starts the platform).

useRevenuePlatform();

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
