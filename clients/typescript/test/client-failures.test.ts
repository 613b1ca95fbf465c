import { describe, expect, it } from "vitest";
import { PlatformConnectionError, PlatformError } from "../src/index.js";
import { client, newDeal, recordingFetch, running, usePlatform } from "./client-fixture.js";
import { DOCS_URL } from "./embedded.js";

usePlatform(31_102);

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
    const pending = client("acme-full", { fetch }).organizations.me({ signal: controller.signal });
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
