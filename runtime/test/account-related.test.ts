import { create, toJson } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { EmailEventKind, EmailEventRecordedSchema } from "@platform/contracts/events/email";
import { IdentityAdminService } from "@platform/contracts/identity";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import { toBusMessage } from "@platform/kit/outbox";
import { sandboxAccountId, sandboxOrgId } from "@platform/sandbox";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { EmbeddedPlatform } from "../src/platform.js";
import { type ApiResponse, apiTest, CLOSE_TIMEOUT_MS, START_TIMEOUT_MS } from "./support/platform.js";

// GET /accounts/{id}/related: the gateway composes crm-data (account, contacts, activity) and
// revenue (deals) into one bundle, each part capped with hasMore.
const SEED = "related-test";
const ANALYTICAL = sandboxAccountId(SEED, "analytical");
const t = apiTest({ name: SEED, admin: true });
const { clock, problemType } = t;
let platform: EmbeddedPlatform;

const get = (url: string, apiKey?: string) => t.call("GET", url, { apiKey });
const ok = (url: string) => t.ok(url);
function expectProblem(res: ApiResponse, status: number, name: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers["content-type"]).toContain("application/problem+json");
  expect(res.json().type).toBe(problemType(name));
  return res.json();
}

beforeAll(async () => {
  platform = await t.start();
  await t.settle();
}, START_TIMEOUT_MS);
afterAll(() => t.close(), CLOSE_TIMEOUT_MS);
beforeEach(() => clock.advance(61_000));

describe("GET /accounts/{id}/related", () => {
  it("bundles the account detail with its contacts, deals and recent activity, capped by default", async () => {
    const bundle = await ok(`/accounts/${ANALYTICAL}/related`);
    expect(Object.keys(bundle).sort()).toEqual(["account", "contacts", "deals", "recentActivity"]);
    expect(bundle.account).toEqual((await ok(`/accounts/${ANALYTICAL}`)) as object);

    const allContacts = await ok(`/accounts/${ANALYTICAL}/contacts?limit=100`);
    expect(allContacts.items.length).toBeGreaterThan(20);
    expect(bundle.contacts.items).toEqual(allContacts.items.slice(0, 20));
    expect(bundle.contacts.hasMore).toBe(true);

    const allDeals = await ok(`/accounts/${ANALYTICAL}/deals?limit=100`);
    expect(allDeals.items.length).toBeGreaterThan(0);
    expect(bundle.deals).toEqual({ items: allDeals.items.slice(0, 20), hasMore: allDeals.items.length > 20 });

    // Activity: the last 90 days only, newest first, 10 at most.
    const since = new Date(clock.now().getTime() - 90 * 86_400_000).toISOString();
    const recent = await ok(`/accounts/${ANALYTICAL}/activity?limit=100&since=${since}`);
    expect(recent.items.length).toBeGreaterThan(0);
    expect(bundle.recentActivity.items).toEqual(recent.items.slice(0, 10));
    expect(bundle.recentActivity.hasMore).toBe(recent.items.length > 10);
  });

  it("honours each part's limit, clamps it to the spec's maximum, and says when more exist", async () => {
    const one = await ok(`/accounts/${ANALYTICAL}/related?contactsLimit=1&dealsLimit=1&activityLimit=1`);
    expect(one.contacts.items).toHaveLength(1);
    expect(one.contacts.hasMore).toBe(true);
    expect(one.deals.items).toHaveLength(1);
    expect(one.recentActivity.items.length).toBeLessThanOrEqual(1);

    const all = await ok(`/accounts/${ANALYTICAL}/related?contactsLimit=500&activityLimit=500&dealsLimit=0`);
    const contacts = await ok(`/accounts/${ANALYTICAL}/contacts?limit=100`);
    expect(all.contacts).toEqual({ items: contacts.items, hasMore: false });
    expect(all.deals.items).toHaveLength(1);
    expect(all.recentActivity.items.length).toBeLessThanOrEqual(50);
  });

  it("says hasMore for deals and activity, and leaves activity older than 90 days out by default", async () => {
    const acme = sandboxOrgId(SEED, "acme");
    const daysAgo = (d: number) => new Date(clock.now().getTime() - d * 86_400_000);
    const old = create(EmailEventRecordedSchema, {
      eventId: "related-test-100-days",
      orgId: acme,
      kind: EmailEventKind.SEND,
      occurredAt: timestampFromDate(daysAgo(100)),
      messageId: "msg-100-days",
      recipientEmail: "ada.lovelace@analytical.example",
      subject: "A hundred days ago",
      senderDisplayName: "Casey Nguyen",
    });
    const envelope = {
      id: old.eventId,
      type: EVENT_TYPES.emailEventRecorded,
      source: "email-system",
      time: clock.now().toISOString(),
      data: toJson(EmailEventRecordedSchema, old),
    };
    await platform.bus.publish(TOPICS.email, [toBusMessage(envelope, acme)]);
    await platform.bus.idle();
    const subjects = (bundle: { recentActivity: { items: { reference: { subject?: string } }[] } }) =>
      bundle.recentActivity.items.map((i) => i.reference.subject);
    expect(subjects(await ok(`/accounts/${ANALYTICAL}/related?activityLimit=50`))).not.toContain("A hundred days ago");
    const since = daysAgo(120).toISOString();
    expect(subjects(await ok(`/accounts/${ANALYTICAL}/related?activityLimit=50&activitySince=${since}`))).toContain(
      "A hundred days ago",
    );

    const created = await t.call("POST", "/deals", {
      headers: { "idempotency-key": "related-2nd" },
      body: { name: "Analytical Engines: second deal", accountId: ANALYTICAL, stage: "Discovery" },
    });
    expect(created.statusCode, created.body).toBe(201);
    const one = await ok(`/accounts/${ANALYTICAL}/related?dealsLimit=1&activityLimit=1`);
    expect(one.deals.items).toHaveLength(1);
    expect(one.deals.hasMore).toBe(true);
    expect(one.recentActivity.items).toHaveLength(1);
    expect(one.recentActivity.hasMore).toBe(true);
    const both = await ok(`/accounts/${ANALYTICAL}/related?dealsLimit=2`);
    expect(both.deals.items).toHaveLength(2);
    expect(both.deals.hasMore).toBe(false);
  });

  it("takes activitySince as the lookback, and refuses a malformed one or a non-numeric limit", async () => {
    const everything = await ok(`/accounts/${ANALYTICAL}/related?activitySince=2020-01-01&activityLimit=50`);
    const timeline = await ok(`/accounts/${ANALYTICAL}/activity?since=2020-01-01&limit=50`);
    expect(everything.recentActivity.items).toEqual(timeline.items);
    const future = await ok(`/accounts/${ANALYTICAL}/related?activitySince=2099-01-01T00:00:00Z`);
    expect(future.recentActivity).toEqual({ items: [], hasMore: false });

    const bad = expectProblem(
      await get(`/accounts/${ANALYTICAL}/related?activitySince=yesterday`),
      400,
      "invalid-filter",
    );
    expect(bad.field).toBe("activitySince");
    expectProblem(await get(`/accounts/${ANALYTICAL}/related?contactsLimit=many`), 400, "invalid-field");
  });

  it("answers 404 account-not-found for an unknown or another org's account, 400 for a wrong prefix", async () => {
    expectProblem(await get(`/accounts/${sandboxAccountId(SEED, "nobody")}/related`), 404, "account-not-found");
    expectProblem(await get(`/accounts/${sandboxAccountId(SEED, "umbrella-wonka")}/related`), 404, "account-not-found");
    expectProblem(await get(`/accounts/${sandboxOrgId(SEED, "acme")}/related`), 400, "invalid-resource-id");
  });

  it("needs accounts:read", async () => {
    const admin = t.adminClient(IdentityAdminService);
    const { key: contactsOnly } = await admin.createToken({
      orgId: sandboxOrgId(SEED, "acme"),
      scopes: ["contacts:read"],
    });
    const body = expectProblem(await get(`/accounts/${ANALYTICAL}/related`, contactsOnly), 403, "insufficient-scope");
    expect(body.requiredScope).toBe("accounts:read");
  });
});
