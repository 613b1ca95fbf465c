import { sandboxOrgId } from "@platform/sandbox";
import { afterAll, beforeAll, beforeEach, describe, expect, expectTypeOf, it } from "vitest";
import {
  type Deal,
  type DealListItem,
  isV2Event,
  PlatformClient,
  PlatformConnectionError,
  PlatformError,
  type PlatformProblem,
  verifyWebhook,
  WebhookVerificationError,
} from "../src/index.js";
import { DOCS_URL, type RunningPlatform, startPlatform, startReceiver, waitFor } from "./embedded.js";

// The client against the whole platform (gateway, services, PGlite) on a real port.
const SEED = "client-test";
const PORT = 31_100;
const RECEIVER_PORT = 31_101;

let running: RunningPlatform;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

/** A fetch that records every request it passes on, and may fail or answer in its place. */
function recordingFetch(
  intercept?: (call: number, url: string, init: RequestInit) => Promise<Response | undefined> | Response | undefined,
) {
  const calls: {
    url: string;
    method: string;
    headers: Record<string, string>;
    status?: number;
    retryAfter?: string | null;
  }[] = [];
  const fetcher = async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = String(input);
    const entry = {
      url,
      method: init.method ?? "GET",
      headers: { ...(init.headers as Record<string, string>) },
      status: undefined as number | undefined,
      retryAfter: undefined as string | null | undefined,
    };
    calls.push(entry);
    const replaced = await intercept?.(calls.length, url, init);
    const res = replaced ?? (await fetch(input, init));
    entry.status = res.status;
    entry.retryAfter = res.headers.get("retry-after");
    return res;
  };
  return { calls, fetch: fetcher as typeof fetch };
}

function client(key = "acme-full", extra: Partial<ConstructorParameters<typeof PlatformClient>[0]> = {}) {
  return new PlatformClient({
    apiKey: running.keys[key]!,
    baseUrl: running.baseUrl,
    // Waiting moves the platform's clock instead of the test's time.
    sleep: async (ms) => running.clock.advance(ms),
    ...extra,
  });
}

let n = 0;
async function someAccountId(): Promise<string> {
  const page = await client().accounts.list({ limit: 1 });
  return page.items[0]!.id;
}
const newDeal = async () => ({ name: `Client test deal ${++n}`, accountId: await someAccountId(), stage: "Discovery" });

// Starting the whole platform takes long on a loaded machine.
beforeAll(async () => {
  running = await startPlatform({ port: PORT, seed: SEED });
  receiver = await startReceiver(RECEIVER_PORT);
}, 180_000);
afterAll(async () => {
  await receiver?.close();
  await running?.close();
});
// Each test starts with fresh one-minute rate-limit windows.
beforeEach(() => running.clock.advance(61_000));

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

describe("retries and idempotency", () => {
  /** Uses up the write tier (20 a minute per token) with requests the gateway refuses after counting them. */
  async function exhaustWrites(key: string) {
    const c = client(key, { retry: false });
    for (let i = 0; i < 20; i++) await c.deals.create({} as never).catch(() => undefined);
  }

  it("retries a real 429 after its Retry-After, with the same Idempotency-Key", async () => {
    const { calls, fetch } = recordingFetch();
    const waits: number[] = [];
    const c = client("acme-full", {
      fetch,
      sleep: async (ms) => {
        waits.push(ms);
        running.clock.advance(ms);
      },
    });
    const body = await newDeal();
    await exhaustWrites("acme-full");
    const created = await c.send("createDeal", body);
    expect(created.status).toBe(201);
    expect(created.data.name).toBe(body.name);
    expect(calls.map((call) => call.status)).toEqual([429, 201]);
    expect(created.attempts).toBe(2);
    // The wait honoured Retry-After (whole seconds), plus at most 250 ms of jitter.
    const retryAfter = Number(calls[0]!.retryAfter);
    expect(retryAfter).toBeGreaterThan(0);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(retryAfter * 1000);
    expect(waits[0]).toBeLessThanOrEqual(retryAfter * 1000 + 250);
    expect(calls[0]!.headers["idempotency-key"]).toMatch(/\S/);
    expect(calls[1]!.headers["idempotency-key"]).toBe(calls[0]!.headers["idempotency-key"]);
  });

  it("throws the 429 when retries are off, or when Retry-After is longer than it may wait", async () => {
    await exhaustWrites("acme-full");
    for (const options of [{ retry: false as const }, { retry: { maxRetryAfterMs: 500 } }]) {
      const { calls, fetch } = recordingFetch();
      const err = (await client("acme-full", { fetch, ...options })
        .deals.create(await newDeal())
        .catch((e: unknown) => e)) as PlatformError;
      expect(err).toBeInstanceOf(PlatformError);
      expect(err.is("rate-limit-exceeded")).toBe(true);
      expect(err.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(calls.filter((call) => call.method === "POST")).toHaveLength(1);
    }
  });

  it("replays a write whose answer was lost: the retry carries the same key and returns the original result", async () => {
    let original: unknown;
    const { calls, fetch } = recordingFetch(async (call, url, init) => {
      if (call !== 1) return undefined;
      // The platform executes the first attempt; its answer is lost on the way back.
      original = await (await globalThis.fetch(url, init)).json();
      throw new TypeError("fetch failed");
    });
    const c = client("acme-full", { fetch });
    const created = await c.send("createDeal", await newDeal());
    expect(calls).toHaveLength(2);
    expect(calls[1]!.headers["idempotency-key"]).toBe(calls[0]!.headers["idempotency-key"]);
    expect(created.replayed).toBe(true);
    expect(created.data).toEqual(original);
    // Executed once: a single deal carries the name.
    const named = (await c.deals.list({ search: created.data.name, limit: 100 }).all()).filter(
      (d) => d.name === created.data.name,
    );
    expect(named.map((d) => d.id)).toEqual([created.data.id]);
    // A new logical call gets a new key, so it creates another deal.
    const again = await client().send("createDeal", { ...(await newDeal()), name: created.data.name });
    expect(again.replayed).toBe(false);
    expect(again.data.id).not.toBe(created.data.id);
  });

  it("backs off exponentially with jitter on 503 and network failures, and keeps the caller's key", async () => {
    const waits: number[] = [];
    const { calls, fetch } = recordingFetch((call) => {
      if (call === 1) throw new TypeError("fetch failed");
      if (call === 2 || call === 3) {
        return new Response(JSON.stringify({ type: `${DOCS_URL}/platform-api/errors/service-unavailable` }), {
          status: 503,
          headers: { "content-type": "application/problem+json" },
        });
      }
      return undefined;
    });
    const c = client("acme-full", {
      fetch,
      random: () => 0.5,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    const created = await c.send("createDeal", await newDeal(), { idempotencyKey: "client-test-backoff" });
    expect(created.status).toBe(201);
    expect(created.attempts).toBe(4);
    // Equal jitter at 0.5: three quarters of 1 s, 2 s and 4 s.
    expect(waits).toEqual([750, 1500, 3000]);
    expect(new Set(calls.map((call) => call.headers["idempotency-key"]))).toEqual(new Set(["client-test-backoff"]));
  });

  it("gives up after maxRetries and reports the last answer", async () => {
    const { calls, fetch } = recordingFetch(
      () => new Response("upstream down", { status: 503, headers: { "content-type": "text/plain" } }),
    );
    const err = (await client("acme-full", { fetch, retry: { maxRetries: 2 } })
      .organizations.me()
      .catch((e: unknown) => e)) as PlatformError;
    expect(err).toBeInstanceOf(PlatformError);
    expect(err.status).toBe(503);
    expect(err.problem).toBeUndefined();
    expect(err.body).toBe("upstream down");
    expect(err.attempts).toBe(3);
    expect(calls).toHaveLength(3);
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

describe("connection failures", () => {
  /**
   * A fetch that never answers its first request, until that request's signal aborts; later
   * requests reach the platform without the deadline (so a slow machine cannot fail them).
   */
  const hangingFirst = () =>
    recordingFetch((call, url, init) =>
      call === 1
        ? new Promise<Response>((_, reject) =>
            init.signal?.addEventListener("abort", () => reject(init.signal?.reason)),
          )
        : globalThis.fetch(url, { ...init, signal: null }),
    );

  it("retries an attempt that missed its deadline", async () => {
    const { calls, fetch } = hangingFirst();
    const org = await client("acme-full", { fetch, timeoutMs: 100 }).send("getMyOrganization");
    expect(org.attempts).toBe(2);
    expect(calls).toHaveLength(2);
  });

  it("stops at once when the caller aborts, retries and waits included", async () => {
    const { calls, fetch } = hangingFirst();
    const controller = new AbortController();
    const pending = client("acme-full", { fetch }).organizations.me({}, { signal: controller.signal });
    controller.abort(new Error("caller gave up"));
    await expect(pending).rejects.toThrow("caller gave up");
    expect(calls).toHaveLength(1);
  });

  it("wraps a network failure that cannot be retried", async () => {
    const failing = (async () => {
      throw new TypeError("fetch failed");
    }) as unknown as typeof fetch;
    const err = await client("acme-full", { fetch: failing, retry: false })
      .organizations.me()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformConnectionError);
    expect((err as PlatformConnectionError).attempts).toBe(1);
  });
});
