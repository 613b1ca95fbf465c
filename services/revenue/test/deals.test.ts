import { DealService } from "@platform/contracts/revenue";
import { newId } from "@platform/kit/ids";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { txStore } from "../src/store/index.js";
import {
  createTestRevenue,
  type Org,
  outboxRows,
  problemDetailOf,
  problemOf,
  type TestRevenue,
  withHeaders,
} from "./builders.js";

let t: TestRevenue;
let org: Org;
const deals = (opts = {}) => t.caller(DealService, org.orgId, opts);

beforeAll(async () => {
  t = await createTestRevenue();
  org = await t.givenOrg();
});
afterAll(() => t.close());

const aDeal = (overrides = {}) => ({
  name: "Difference Engine rollout",
  accountId: org.accountId,
  stage: "Discovery",
  ...overrides,
});

describe("creating deals", () => {
  it("creates a deal on the default schema, owned by the org's administrator unless ownerId says otherwise", async () => {
    const { deal } = await deals().createDeal(
      aDeal({ amount: { value: 1200.5, currency: "EUR" }, closeDate: "2026-05-31", customFields: { probability: 30 } }),
    );
    expect(deal).toMatchObject({
      orgId: org.orgId,
      stage: "Discovery",
      amount: { value: 1200.5, currency: "EUR" },
      closeDate: "2026-05-31",
      account: { id: org.accountId, name: "Analytical Engines Ltd" },
      owner: { userId: org.adminId, displayName: "Avery Stone" },
      schemaId: org.schema.id,
      schemaVersion: 1,
      customFields: { probability: 30 },
    });
    const owned = await deals().createDeal(aDeal({ ownerId: org.ownerId, primaryContactId: org.contactId }));
    expect(owned.deal?.owner).toMatchObject({ userId: org.ownerId, displayName: "Casey Morgan" });
    expect(owned.deal?.primaryContact).toMatchObject({ id: org.contactId, displayName: "Ada Lovelace" });
    const rows = await outboxRows(t.db);
    expect(rows.filter((r) => r.type === "revenue.deal.created").map((r) => r.subject)).toContain(deal?.id);
  });

  it("checks the account, the contact and the owner against the caller's org", async () => {
    expect(await problemOf(deals().createDeal(aDeal({ accountId: newId("acct_") })))).toBe("account-not-found");
    expect(await problemOf(deals().createDeal(aDeal({ accountId: "not-an-id" })))).toBe("account-not-found");
    expect(await problemOf(deals().createDeal(aDeal({ primaryContactId: newId("cont_") })))).toBe("contact-not-found");
    expect(await problemOf(deals().createDeal(aDeal({ ownerId: newId("usr_") })))).toBe("user-not-found");
    const other = await t.givenOrg();
    // Another org's account, contact, user or schema is as unknown as a made-up one.
    expect(await problemOf(deals().createDeal(aDeal({ accountId: other.accountId })))).toBe("account-not-found");
    expect(await problemOf(deals().createDeal(aDeal({ primaryContactId: other.contactId })))).toBe("contact-not-found");
    expect(await problemOf(deals().createDeal(aDeal({ ownerId: other.ownerId })))).toBe("user-not-found");
    expect(await problemOf(deals().createDeal(aDeal({ schemaId: other.schema.id })))).toBe("schema-not-found");
    // The other org's own names, all in revenue's projections by now, create its deal.
    const { deal } = await t.caller(DealService, other.orgId).createDeal({
      name: "Theirs",
      accountId: other.accountId,
      stage: "Discovery",
      primaryContactId: other.contactId,
      ownerId: other.ownerId,
      schemaId: other.schema.id,
    });
    expect(deal).toMatchObject({
      account: { id: other.accountId },
      primaryContact: { id: other.contactId },
      owner: { userId: other.ownerId },
      schemaId: other.schema.id,
    });
  });

  it("rejects a stage outside the schema, a value without currency and custom fields off the schema", async () => {
    const mismatch = async (overrides: object) => (await problemDetailOf(deals().createDeal(aDeal(overrides)))).name;
    expect(await mismatch({ stage: "Closed Won" })).toBe("schema-mismatch");
    expect(await mismatch({ amount: { value: 10, currency: "" } })).toBe("schema-mismatch");
    expect(await mismatch({ customFields: { unknown: 1 } })).toBe("schema-mismatch");
    expect(await mismatch({ customFields: { probability: "high" } })).toBe("schema-mismatch");
    expect(await mismatch({ schemaId: newId("schm_") })).toBe("schema-not-found");
  });

  it("refuses a second deal with the same CRM id, and finds the deal by it", async () => {
    const crmId = `006-${newId("x_")}`;
    const { deal } = await deals().createDeal(aDeal({ crmSourceId: crmId, crmSourceUrl: "https://crm.example/1" }));
    const conflict = await problemDetailOf(deals().createDeal(aDeal({ crmSourceId: crmId })));
    expect(conflict).toMatchObject({ name: "source-ref-conflict", extensions: { sourceType: "crm", sourceId: crmId } });
    const found = await deals().getDealBySource({ sourceType: "crm", sourceId: crmId });
    expect(found.deal?.id).toBe(deal?.id);
    expect(found.deal?.sourceRefs?.crm).toMatchObject({ id: crmId, url: "https://crm.example/1" });
    expect(await problemOf(deals().getDealBySource({ sourceType: "crm", sourceId: "unknown" }))).toBe("deal-not-found");
    expect(await problemOf(deals().getDealBySource({ sourceType: "other", sourceId: crmId }))).toBe("deal-not-found");
    const other = await t.givenOrg();
    expect(
      await problemOf(t.caller(DealService, other.orgId).getDealBySource({ sourceType: "crm", sourceId: crmId })),
    ).toBe("deal-not-found");
  });

  it("replays a repeated Idempotency-Key without a second deal, and refuses it with another body", async () => {
    const key = newId("idem_");
    const first = await deals({ idempotencyKey: key }).createDeal(aDeal({ name: "Once" }));
    const again = await withHeaders((o) => deals({ idempotencyKey: key }).createDeal(aDeal({ name: "Once" }), o));
    expect(again.response.deal?.id).toBe(first.deal?.id);
    expect(again.headers.get("x-idempotent-replay")).toBe("true");
    expect(await problemOf(deals({ idempotencyKey: key }).createDeal(aDeal({ name: "Twice" })))).toBe(
      "idempotency-key-conflict",
    );
    expect(await problemOf(deals({ noIdempotencyKey: true }).createDeal(aDeal()))).toBe("idempotency-key-required");
  });

  it("answers a replay as the first time, without asking crm-data again, even if the account is gone since", async () => {
    const key = newId("idem_");
    const first = await deals({ idempotencyKey: key }).createDeal(aDeal({ name: "Replayed" }));
    const account = t.crm.accounts.get(org.accountId);
    t.crm.accounts.delete(org.accountId);
    try {
      const callsBefore = t.crm.calls;
      const again = await withHeaders((o) => deals({ idempotencyKey: key }).createDeal(aDeal({ name: "Replayed" }), o));
      expect(again.response.deal?.id).toBe(first.deal?.id);
      expect(again.headers.get("x-idempotent-replay")).toBe("true");
      expect(t.crm.calls).toBe(callsBefore);
      // A new key is a new write, answered from revenue's projection of the account it has
      // seen: crm-data is not asked again (writes do not wait on or fail with it).
      const fresh = await deals().createDeal(aDeal({ name: "Replayed" }));
      expect(fresh.deal?.account?.id).toBe(org.accountId);
      expect(t.crm.calls).toBe(callsBefore);
    } finally {
      if (account) t.crm.accounts.set(org.accountId, account);
    }
  });
});

describe("a create's replay", () => {
  it("answers as the first time even when the checks before its write would now fail", async () => {
    const gone = await t.givenOrg();
    const key = newId("idem_");
    const create = () =>
      t
        .caller(DealService, gone.orgId, { idempotencyKey: key })
        .createDeal({ name: "Then", accountId: gone.accountId, stage: "Discovery" });
    const first = await create();
    // The account is gone from crm-data and from revenue's projection: a new create is 404...
    t.crm.accounts.delete(gone.accountId);
    await t.db.query("DELETE FROM revenue.account_refs WHERE id = $1", [gone.accountId]);
    expect(
      await problemOf(
        t.caller(DealService, gone.orgId).createDeal({ name: "Now", accountId: gone.accountId, stage: "Discovery" }),
      ),
    ).toBe("account-not-found");
    // ...and the replay still answers what it answered, or 422 with another body.
    const again = await withHeaders((o) =>
      t
        .caller(DealService, gone.orgId, { idempotencyKey: key })
        .createDeal({ name: "Then", accountId: gone.accountId, stage: "Discovery" }, o),
    );
    expect(again.response.deal?.id).toBe(first.deal?.id);
    expect(again.headers.get("x-idempotent-replay")).toBe("true");
    expect(
      await problemOf(
        t
          .caller(DealService, gone.orgId, { idempotencyKey: key })
          .createDeal({ name: "Other", accountId: gone.accountId, stage: "Discovery" }),
      ),
    ).toBe("idempotency-key-conflict");
    expect(await t.db.query("SELECT id FROM revenue.deals WHERE org_id = $1", [gone.orgId])).toHaveLength(1);
  });
});

describe("updating deals", () => {
  it("merges custom fields: keys set, null removes, others kept", async () => {
    const { deal } = await deals().createDeal(
      aDeal({ customFields: { probability: 30, competitor: "Jacquard", renewal: true } }),
    );
    const { deal: updated } = await deals().updateDeal({
      dealId: deal?.id ?? "",
      customFields: { probability: 55, competitor: null, products: ["a"] },
    });
    expect(updated?.customFields).toEqual({ probability: 55, renewal: true, products: ["a"] });
    expect(await problemOf(deals().updateDeal({ dealId: deal?.id ?? "", customFields: { nope: 1 } }))).toBe(
      "schema-mismatch",
    );
  });

  it("changes only the fields present and clears the nullable ones asked for", async () => {
    const { deal } = await deals().createDeal(
      aDeal({ amount: { value: 10, currency: "USD" }, closeDate: "2026-06-01", primaryContactId: org.contactId }),
    );
    const id = deal?.id ?? "";
    const { deal: renamed } = await deals().updateDeal({ dealId: id, name: "Renamed" });
    expect(renamed).toMatchObject({ name: "Renamed", stage: "Discovery", closeDate: "2026-06-01" });
    const { deal: cleared } = await deals().updateDeal({
      dealId: id,
      clearedFields: ["amount", "closeDate", "primaryContactId"],
    });
    expect(cleared?.amount).toBeUndefined();
    expect(cleared?.closeDate).toBeUndefined();
    expect(cleared?.primaryContact).toBeUndefined();
    const { deal: moved } = await deals().updateDeal({ dealId: id, accountId: org.otherAccountId, stage: "Proposal" });
    expect(moved?.account).toMatchObject({ id: org.otherAccountId, name: "COBOL Systems" });
  });

  it("refuses any change to a Won or Lost deal", async () => {
    for (const stage of ["Won", "Lost"]) {
      const { deal } = await deals().createDeal(aDeal());
      await deals().updateDeal({ dealId: deal?.id ?? "", stage });
      const closed = await problemDetailOf(deals().updateDeal({ dealId: deal?.id ?? "", name: "Reopen" }));
      expect(closed).toMatchObject({ name: "deal-closed", extensions: { stage } });
    }
  });

  it("answers deal-not-found and deal-closed before checking references, without asking crm-data", async () => {
    const callsBefore = t.crm.calls;
    const unknownAccount = newId("acct_");
    expect(await problemOf(deals().updateDeal({ dealId: newId("deal_"), accountId: unknownAccount }))).toBe(
      "deal-not-found",
    );
    expect(t.crm.calls).toBe(callsBefore);
    const { deal } = await deals().createDeal(aDeal({ stage: "Won" }));
    const callsAfterCreate = t.crm.calls;
    expect(await problemOf(deals().updateDeal({ dealId: deal?.id ?? "", accountId: unknownAccount }))).toBe(
      "deal-closed",
    );
    expect(await problemOf(deals().updateDeal({ dealId: deal?.id ?? "", primaryContactId: newId("cont_") }))).toBe(
      "deal-closed",
    );
    expect(t.crm.calls).toBe(callsAfterCreate);
  });

  it("records the schema's version when the deal is updated after a schema change", async () => {
    const { deal } = await deals().createDeal(aDeal());
    expect(deal?.schemaVersion).toBe(1);
    await t.db.query("UPDATE revenue.deal_schemas SET version = 2 WHERE id = $1", [org.schema.id]);
    expect((await deals().getDeal({ dealId: deal?.id ?? "" })).deal?.schemaVersion).toBe(1);
    const { deal: updated } = await deals().updateDeal({ dealId: deal?.id ?? "", name: "After the change" });
    expect(updated?.schemaVersion).toBe(2);
    await t.db.query("UPDATE revenue.deal_schemas SET version = 1 WHERE id = $1", [org.schema.id]);
  });

  it("404s an unknown or another org's deal", async () => {
    const { deal } = await deals().createDeal(aDeal());
    const other = await t.givenOrg();
    expect(await problemOf(t.caller(DealService, other.orgId).getDeal({ dealId: deal?.id ?? "" }))).toBe(
      "deal-not-found",
    );
    expect(await problemOf(deals().updateDeal({ dealId: newId("deal_"), name: "x" }))).toBe("deal-not-found");
    expect(await problemOf(deals().getDeal({ dealId: "deal_bad" }))).toBe("invalid-resource-id");
  });
});

describe("listing deals", () => {
  it("filters by search, account, stages, owner and close date, and pages by every sort without repeats", async () => {
    const mine = await t.givenOrg();
    const caller = t.caller(DealService, mine.orgId);
    const specs = [
      { name: "Alpha", stage: "Discovery", amount: { value: 300, currency: "USD" }, closeDate: "2026-04-01" },
      { name: "beta", stage: "Proposal", amount: { value: 100, currency: "USD" }, closeDate: "2026-05-01" },
      { name: "Gamma alpha", stage: "Won", closeDate: "2026-06-01", ownerId: mine.ownerId },
      { name: "Delta", stage: "Proposal", amount: { value: 200, currency: "EUR" }, accountId: mine.otherAccountId },
    ];
    for (const s of specs) {
      t.clock.advance(1000);
      await caller.createDeal({ accountId: mine.accountId, ...s });
    }
    const names = async (filter: object, sort = "name") =>
      (await caller.listDeals({ sort, limit: 50, filter })).deals.map((d) => d.name);
    expect(await names({ search: "ALPHA" })).toEqual(["Alpha", "Gamma alpha"]);
    expect(await names({ accountId: mine.otherAccountId })).toEqual(["Delta"]);
    expect(await names({ stages: ["Proposal", "Won"] })).toEqual(["beta", "Delta", "Gamma alpha"]);
    expect(await names({ ownerUserId: mine.ownerId })).toEqual(["Gamma alpha"]);
    expect(await names({ closingBefore: "2026-05-01", closingAfter: "2026-04-02" })).toEqual(["beta"]);
    expect(await names({}, "amount")).toEqual(["beta", "Delta", "Alpha", "Gamma alpha"]);
    expect(await names({}, "-closeDate")).toEqual(["Gamma alpha", "beta", "Alpha", "Delta"]);
    // List view: no detail fields.
    const [first] = (await caller.listDeals({ sort: "name", limit: 1, filter: {} })).deals;
    expect(first?.customFields).toBeUndefined();
    expect(first?.schemaId).toBe("");
    for (const sort of ["updatedAt", "-createdAt", "name", "-name", "closeDate", "-amount", "amount"]) {
      const seen: string[] = [];
      let cursor = "";
      do {
        const page = await caller.listDeals({ sort, limit: 1, cursor, filter: {} });
        seen.push(...page.deals.map((d) => d.id));
        cursor = page.nextCursor;
      } while (cursor);
      expect(new Set(seen).size, sort).toBe(4);
    }
    const byAccount = await caller.listAccountDeals({ accountId: mine.accountId, sort: "name", limit: 2 });
    expect(byAccount.deals.map((d) => d.name)).toEqual(["Alpha", "beta"]);
    expect(byAccount.nextCursor).not.toBe("");
    expect(await problemOf(caller.listAccountDeals({ accountId: newId("acct_"), sort: "name" }))).toBe(
      "account-not-found",
    );
  });
});

describe("linked meetings", () => {
  it("links meetings whose attendee is a contact of the deal's account, resolved when read", async () => {
    const mine = await t.givenOrg();
    const caller = t.caller(DealService, mine.orgId);
    const { deal } = await caller.createDeal({ name: "Links", accountId: mine.accountId, stage: "Discovery" });
    const late = await t.givenMeeting({
      orgId: mine.orgId,
      attendeeEmails: ["late.contact@analytical.example"],
      start: new Date("2026-03-05T10:00:00Z"),
      end: new Date("2026-03-05T11:00:00Z"),
    });
    await t.givenMeeting({ orgId: mine.orgId, attendeeEmails: ["stranger@elsewhere.example"] });
    // A preview booking with the deal's contact: kept for references, never linked (like CRM sync).
    await t.givenMeeting({
      orgId: mine.orgId,
      attendeeEmails: [`ada.${mine.orgId}@analytical.example`],
      preview: true,
    });
    const ids = async () =>
      (await caller.listDealMeetings({ dealId: deal?.id ?? "" })).meetings.map((m) => m.meetingId);
    expect(await ids()).toEqual([mine.meetingId]);
    // The contact arrives after its meeting: the link appears without any replay.
    t.crm.contacts.set(newId("cont_"), {
      orgId: mine.orgId,
      accountId: mine.accountId,
      displayName: "Late Contact",
      email: "late.contact@analytical.example",
    });
    expect(await ids()).toEqual([late.id, mine.meetingId]);
    t.crm.transcripts.add(mine.meetingId);
    const page = await caller.listDealMeetings({ dealId: deal?.id ?? "", sort: "startTime" });
    expect(page.meetings.map((m) => [m.meetingId, m.hasTranscript, m.status])).toEqual([
      [mine.meetingId, true, "completed"],
      [late.id, false, "scheduled"],
    ]);
    const since = await caller.listDealMeetings({
      dealId: deal?.id ?? "",
      since: { seconds: BigInt(Date.parse("2026-03-03T00:00:00Z") / 1000), nanos: 0 },
    });
    expect(since.meetings.map((m) => m.meetingId)).toEqual([late.id]);
  });
});

describe("storage guards", () => {
  it("the database refuses a second deal with an org's CRM id even without the handler", async () => {
    const { deal } = await deals().createDeal(aDeal({ crmSourceId: "guarded-1" }));
    const stored = await txStore(t.db).findDeal(org.orgId, deal?.id ?? "");
    if (!stored) throw new Error("deal not stored");
    // A store write runs in a transaction (it is deferred to the statement before COMMIT).
    const insert = t.db.tx((q) => txStore(q).insertDeal({ ...stored, id: newId("deal_") }));
    await expect(insert).rejects.toMatchObject({
      problemName: "source-ref-conflict",
    });
  });
});
