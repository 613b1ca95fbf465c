import { Webhook } from "standardwebhooks";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  DEFAULT_AVAILABILITY_DAYS,
  generateTestWebhookHeaders,
  lastResponse,
  PlatformClient,
  type QueryOf,
  verifyWebhook,
  type WebhookEvent,
  WebhookVerificationError,
} from "../src/index.js";

// Issue 56, point 6 (typing holes) and point 9 (the availability answer's size), against a
// stand-in fetch: what the client sends and returns, and what the compiler accepts. The type
// assertions (expectTypeOf, @ts-expect-error) are checked by `npm run typecheck`.

interface Sent {
  url: string;
  method: string;
  body: unknown;
}

function fakeClient(answer: unknown, extra: Partial<ConstructorParameters<typeof PlatformClient>[0]> = {}) {
  const sent: Sent[] = [];
  const fetch = (async (url: string | URL | Request, init: RequestInit = {}) => {
    sent.push({
      url: String(url),
      method: init.method ?? "GET",
      body: init.body === undefined ? undefined : JSON.parse(String(init.body)),
    });
    return new Response(JSON.stringify(answer), {
      status: 200,
      headers: { "content-type": "application/json", "x-request-id": `req_${sent.length}` },
    });
  }) as typeof globalThis.fetch;
  return { client: new PlatformClient({ apiKey: "k", fetch, retry: false, ...extra }), sent };
}

describe("operations without parameters", () => {
  it("take only request options, so nothing reaches the query", async () => {
    const { client, sent } = fakeClient({ id: "org_1", name: "Acme" });
    const controller = new AbortController();
    await client.organizations.me({ signal: controller.signal, headers: { "x-trace": "1" } });
    expect(sent[0]?.url).toBe("http://127.0.0.1:8080/api/v1alpha1/organizations/me");
    // @ts-expect-error: an arbitrary object is not request options.
    await client.organizations.me({ includeSeats: true });
    // The object was taken as options, so it still sent no query.
    expect(sent[1]?.url).toBe("http://127.0.0.1:8080/api/v1alpha1/organizations/me");
    expectTypeOf(client.organizations.entitlements).parameters.toEqualTypeOf<
      [options?: Parameters<typeof client.organizations.entitlements>[0]]
    >();
  });
});

describe("sort as a union", () => {
  it("accepts the list's allowlist in both directions and nothing else", async () => {
    const { client, sent } = fakeClient({ items: [], nextCursor: null });
    await client.deals.list({ sort: "-closeDate" });
    expect(sent[0]?.url).toContain("sort=-closeDate");
    expectTypeOf<NonNullable<QueryOf<"listDeals">["sort"]>>().toEqualTypeOf<
      | "updatedAt"
      | "-updatedAt"
      | "createdAt"
      | "-createdAt"
      | "name"
      | "-name"
      | "closeDate"
      | "-closeDate"
      | "amount"
      | "-amount"
    >();
    // @ts-expect-error: a typo does not compile.
    client.deals.list({ sort: "-closedate" });
  });
});

describe("revenue webhook payloads", () => {
  it("are typed field by field", () => {
    type Created = WebhookEvent<"revenue.deal.created">["data"];
    expectTypeOf<NonNullable<Created["deal"]>["stage"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<NonNullable<NonNullable<Created["deal"]>["createTime"]>>().toEqualTypeOf<string>();
    expectTypeOf<WebhookEvent<"revenue.deal.updated">["data"]["previousStage"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<keyof WebhookEvent<"revenue.insight.item-appended">["data"]>().toEqualTypeOf<
      "recordId" | "dealId" | "orgId" | "schemaType" | "fieldKey" | "item"
    >();
    const event = { data: {} } as WebhookEvent<"revenue.qna.updated">;
    // @ts-expect-error: not a field of the payload (it was Record<string, unknown>, where this compiled).
    expect(event.data.previousStatus).toBeUndefined();
  });
});

describe("the request id of a successful call", () => {
  it("comes with the result, without changing its shape", async () => {
    const body = { id: "deal_1", name: "Expansion" };
    const { client } = fakeClient(body);
    const deal = await client.deals.get({ dealId: "deal_1" });
    expect(lastResponse(deal)).toMatchObject({ requestId: "req_1", status: 200, replayed: false, attempts: 1 });
    expect(lastResponse(deal)?.headers.get("content-type")).toBe("application/json");
    expect(Object.keys(deal)).toEqual(["id", "name"]);
    expect(JSON.stringify(deal)).toBe(JSON.stringify(body));
    const page = await fakeClient({ items: [], nextCursor: null }).client.deals.list();
    expect(lastResponse(page)?.requestId).toBe("req_1");
    expect(lastResponse({ id: "deal_1" })).toBeUndefined();
  });
});

describe("signing a test payload", () => {
  const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  const body = JSON.stringify({ id: "evt_test", type: "revenue.deal.created", timestamp: "t", data: {} });

  it("makes headers that the client, and the Standard Webhooks library, verify", () => {
    const now = new Date("2026-12-06T10:00:00Z");
    const headers = generateTestWebhookHeaders(secret, body, { timestamp: now });
    expect(headers["webhook-id"]).toBe("evt_test");
    expect(headers["webhook-timestamp"]).toBe(String(now.getTime() / 1000));
    expect(verifyWebhook(secret, headers, body, { now })).toEqual(JSON.parse(body));
    const recent = generateTestWebhookHeaders(secret, body);
    expect(new Webhook(secret).verify(body, { ...recent })).toEqual(JSON.parse(body));
  });

  it("tests a receiver's refusals too: an old timestamp, another secret", () => {
    const old = generateTestWebhookHeaders(secret, body, { timestamp: new Date(Date.now() - 3_600_000) });
    expect(() => verifyWebhook(secret, old, body)).toThrow(WebhookVerificationError);
    const other = generateTestWebhookHeaders("whsec_b3RoZXItc2VjcmV0LW9mLTMyLWJ5dGVzLWxvbmc=", body);
    expect(() => verifyWebhook(secret, other, body)).toThrow("no signature matches");
    expect(generateTestWebhookHeaders(secret, "not json")["webhook-id"]).toMatch(/^msg_[0-9a-f]{32}$/);
  });
});

describe("availability's default window", () => {
  const now = new Date("2026-12-06T10:00:00.000Z");

  it(`asks for ${DEFAULT_AVAILABILITY_DAYS} days from now when the call gives no dateRange`, async () => {
    const { client, sent } = fakeClient({ hostGroups: [], matchedAt: now.toISOString() }, { now: () => now });
    await client.smartSchedules.availability({ scheduleId: "sched_1" }, { formValues: { region: "EMEA" } });
    expect(sent[0]?.body).toEqual({
      formValues: { region: "EMEA" },
      dateRange: { start: "2026-12-06T10:00:00.000Z", end: "2026-12-13T10:00:00.000Z" },
    });
  });

  it("keeps a dateRange the call gives, and asks for the whole booking window with availabilityDays: false", async () => {
    const dateRange = { start: "2026-12-07T00:00:00Z", end: "2026-12-31T00:00:00Z" };
    const given = fakeClient({ hostGroups: [] }, { now: () => now });
    await given.client.smartSchedules.availability({ scheduleId: "sched_1" }, { formValues: {}, dateRange });
    expect(given.sent[0]?.body).toEqual({ formValues: {}, dateRange });
    const whole = fakeClient({ hostGroups: [] }, { now: () => now, availabilityDays: false });
    await whole.client.smartSchedules.availability({ scheduleId: "sched_1" }, { formValues: {} });
    expect(whole.sent[0]?.body).toEqual({ formValues: {} });
  });
});
