import { sandboxOrgId } from "@platform/sandbox";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  type Deal,
  type DealListItem,
  isV2Event,
  PlatformError,
  type PlatformProblem,
  verifyWebhook,
  WebhookVerificationError,
} from "../src/index.js";
import { client, newDeal, receiver, recordingFetch, running, SEED, usePlatform } from "./client-fixture.js";
import { DOCS_URL, waitFor } from "./embedded.js";

usePlatform(31_100, 31_101);

describe("typed calls", () => {
  it("reads through the resource surface, by operationId and by method and path", async () => {
    const c = client();
    const org = await c.organizations.me();
    expect(org.id).toBe(sandboxOrgId(SEED, "acme"));
    expectTypeOf(org.name).toEqualTypeOf<string>();

    const page = await c.deals.list({ limit: 1 });
    const dealId = page.items[0]!.id;
    const deal = await c.deals.get({ dealId });
    expectTypeOf(deal).toEqualTypeOf<Deal>();
    expect(deal.id).toBe(dealId);
    expect(await c.call("getDeal", { dealId })).toEqual(deal);
    expect(await c.request("GET", "/deals/{dealId}", { params: { dealId } })).toEqual(deal);
    const byPath = await c.request("POST", "/deals", { body: await newDeal() });
    expectTypeOf(byPath).toEqualTypeOf<Deal>();
    expect(await c.request("GET", "/deals/{dealId}", { params: { dealId: byPath.id } })).toEqual(byPath);

    const full = await c.send("getOrganization", { orgId: org.id });
    expect(full.status).toBe(200);
    expect(full.headers.get("etag")).toMatch(/^W\/"\d+"$/);
    expect(full.requestId).toMatch(/\S/);
  });

  it("sends If-Match from a version number and writes with a generated Idempotency-Key", async () => {
    const { calls, fetch } = recordingFetch();
    const c = client("acme-full", { fetch });
    const { data: org, headers } = await c.send("getMyOrganization");
    const etag = headers.get("etag")!;
    const version = Number(/\d+/.exec(etag)![0]);
    const updated = await c.organizations.update({ orgId: org.id }, { industry: "Aerospace" }, { ifMatch: etag });
    expect(updated.industry).toBe("Aerospace");
    const patch = calls.find((call) => call.method === "PATCH")!;
    expect(patch.headers["if-match"]).toBe(etag);
    expect(patch.headers["idempotency-key"]).toMatch(/^[0-9a-f-]{36}$/);
    // A version number becomes the weak ETag; this one is stale now: a typed 412, never retried.
    const stale = await c.organizations
      .update({ orgId: org.id }, { industry: "Rail" }, { ifMatch: version })
      .catch((e: unknown) => e);
    expect(calls.at(-1)!.headers["if-match"]).toBe(`W/"${version}"`);
    expect(stale).toBeInstanceOf(PlatformError);
    expect((stale as PlatformError).is("precondition-failed")).toBe(true);
    expect((stale as PlatformError).attempts).toBe(1);
  });
});

describe("problems", () => {
  it("throws a PlatformError with the typed problem, its status and requestId, and never retries a 4xx", async () => {
    const { calls, fetch } = recordingFetch();
    const c = client("acme-full", { fetch });
    // Another organization's deal is the same 404 as an unknown one.
    const [foreign] = (await client("umbrella-full").deals.list({ limit: 1 })).items;
    calls.length = 0;
    const err = await c.deals.get({ dealId: foreign!.id }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformError);
    const e = err as PlatformError;
    expect(e.status).toBe(404);
    expect(e.type).toBe("deal-not-found");
    expect(e.problem).toMatchObject({
      type: "deal-not-found",
      typeUri: `${DOCS_URL}/platform-api/errors/deal-not-found`,
      status: 404,
      title: "Deal not found",
    });
    expect(e.requestId).toBe(e.headers.get("x-request-id"));
    expect(e.problem?.requestId).toBe(e.requestId);
    expect(calls).toHaveLength(1);

    const sort = (await c.deals
      // @ts-expect-error: sort is a union of the list's allowlist, so the typo does not compile.
      .list({ sort: "-color" })
      .then(() => undefined)
      .catch((x: unknown) => x)) as PlatformError;
    expect(sort.is("invalid-sort-field")).toBe(true);
    if (sort.is("invalid-sort-field")) {
      // Narrowed: the extension members of invalid-sort-field are typed.
      expectTypeOf(sort.problem.allowedSortFields).toEqualTypeOf<string[]>();
      expect(sort.problem.allowedSortFields).toContain("updatedAt");
      expect(sort.problem.field).toBe("color");
    }

    const scope = (await client("acme-readonly", { fetch })
      .deals.create(await newDeal())
      .catch((x: unknown) => x)) as PlatformError;
    const problem: PlatformProblem | undefined = scope.problem;
    expect(problem?.type).toBe("insufficient-scope");
    if (problem?.type === "insufficient-scope") expect(problem.requiredScope).toBe("deals:write");
    expect(calls.filter((call) => call.method === "POST")).toHaveLength(1);
  });
});

describe("pagination", () => {
  it("awaits one page, and iterates every item of every page lazily", async () => {
    const { calls, fetch } = recordingFetch();
    const c = client("acme-full", { fetch });
    const everything = await c.deals.list({ limit: 100, sort: "name" });
    expect(everything.nextCursor).toBeNull();
    expect(everything.items.length).toBeGreaterThan(4);

    const first = await c.deals.list({ limit: 2, sort: "name" });
    expect(first.items).toHaveLength(2);
    expect(first.nextCursor).toEqual(expect.any(String));

    calls.length = 0;
    const seen: DealListItem[] = [];
    for await (const deal of c.deals.list({ limit: 2, sort: "name" })) {
      expectTypeOf(deal).toEqualTypeOf<DealListItem>();
      seen.push(deal);
    }
    expect(seen.map((d) => d.id)).toEqual(everything.items.map((d) => d.id));
    expect(calls).toHaveLength(Math.ceil(everything.items.length / 2));
    // Each later page sends the same query with the previous page's cursor.
    expect(new URL(calls[1]!.url).searchParams.get("cursor")).toBe(first.nextCursor);
    expect(new URL(calls[1]!.url).searchParams.get("sort")).toBe("name");

    const pages = [];
    for await (const page of c.deals.list({ limit: 3, sort: "name" }).pages()) pages.push(page.items.length);
    expect(pages.reduce((a, b) => a + b, 0)).toBe(everything.items.length);
  });

  it("sends repeatable filters once per value", async () => {
    const { calls, fetch } = recordingFetch();
    const closed = await client("acme-full", { fetch })
      .deals.list({ stage: ["Won", "Lost"], limit: 1 })
      .all();
    expect(new URL(calls[0]!.url).searchParams.getAll("stage")).toEqual(["Won", "Lost"]);
    expect(closed.length).toBeGreaterThanOrEqual(2);
    expect(new Set(closed.map((d) => d.stage))).toEqual(new Set(["Won", "Lost"]));
  });
});

describe("delegation", () => {
  it("actingOn(orgId) sends X-Platform-Acting-On and acts on the child", async () => {
    const { calls, fetch } = recordingFetch();
    const partner = client("northwind-partner", { fetch });
    const initech = sandboxOrgId(SEED, "initech");
    const child = partner.actingOn(initech);
    expect(child).not.toBe(partner);
    expect((await child.organizations.me()).id).toBe(initech);
    expect(calls.at(-1)!.headers["x-platform-acting-on"]).toBe(initech);
    const answer = await child.send("getMyOrganization");
    expect(answer.headers.get("platform-acting-on")).toBe(initech);
    // The parent client is unchanged.
    expect((await partner.organizations.me()).id).toBe(sandboxOrgId(SEED, "northwind"));
    expect(calls.at(-1)!.headers["x-platform-acting-on"]).toBeUndefined();

    const revoked = (await partner
      .actingOn(sandboxOrgId(SEED, "hooli"))
      .organizations.me()
      .catch((e: unknown) => e)) as PlatformError;
    expect(revoked.is("cross-org-delegation-forbidden")).toBe(true);

    const globex = partner.actingOn(sandboxOrgId(SEED, "globex"));
    const denied = (await globex.webhookSubscriptions
      .list()
      .then(() => undefined)
      .catch((e: unknown) => e)) as PlatformError;
    expect(denied.is("delegation-scope-insufficient")).toBe(true);
    if (denied.is("delegation-scope-insufficient")) {
      expect(denied.problem.requiredScope).toBe("webhooks:read");
      expect(denied.problem.grantedScopes).toContain("deals:read");
    }
  });
});

describe("webhooks", () => {
  it("verifies a real delivery of the platform, with either secret during a rotation", async () => {
    const c = client();
    const sub = await c.webhookSubscriptions.create({ endpointUrl: receiver.url, events: ["revenue.deal.created"] });
    const created = await c.deals.create(await newDeal());
    const delivery = await waitFor(() =>
      receiver.received.find((r) => r.body.includes(created.id) && r.body.includes("revenue.deal.created")),
    );
    const now = running.clock.now();
    const event = verifyWebhook(sub.secret, delivery.headers, delivery.body, { now });
    expect(isV2Event(event)).toBe(true);
    if (isV2Event(event) && event.type === "revenue.deal.created") {
      expect(event.id).toBe(delivery.headers["webhook-id"]);
      expect(JSON.stringify(event.data)).toContain(created.id);
    } else {
      throw new Error(`unexpected event ${JSON.stringify(event)}`);
    }
    expect(() => verifyWebhook(sub.secret, delivery.headers, `${delivery.body} `, { now })).toThrow(
      WebhookVerificationError,
    );

    const rotated = await c.webhookSubscriptions.rotateSecret({ subscriptionId: sub.id });
    const before = receiver.received.length;
    await c.webhookSubscriptions.test({ subscriptionId: sub.id });
    // The body is optional: with one, an example of a catalog kind, marked as a test.
    const example = await c.webhookSubscriptions.test(
      { subscriptionId: sub.id },
      { eventType: "revenue.deal.created" },
    );
    expect(example).toMatchObject({ eventType: "revenue.deal.created", trigger: "test" });
    const ping = await waitFor(() => receiver.received.slice(before).find((r) => r.body.includes("webhook.test")));
    expect(String(ping.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    for (const secrets of [sub.secret, rotated.secret, [sub.secret, rotated.secret]]) {
      const test = verifyWebhook(secrets, ping.headers, ping.body, { now });
      expect(isV2Event(test) && test.type === "webhook.test" && test.data.subscriptionId).toBe(sub.id);
    }
    // A delivery is stale 5 minutes after it was signed.
    const late = new Date(now.getTime() + 301_000);
    expect(() => verifyWebhook(rotated.secret, ping.headers, ping.body, { now: late })).toThrow(/too old/);
  });
});
