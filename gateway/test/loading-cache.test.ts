import { describe, expect, it, vi } from "vitest";
import { type Loaded, LoadingCache } from "../src/loading-cache.js";

/** A loader whose answers the test hands out one by one, counting its calls. */
function loader() {
  const pending: { resolve: (v: Loaded<string>) => void; reject: (e: Error) => void }[] = [];
  return {
    calls: 0,
    pending,
    load() {
      this.calls++;
      return new Promise<Loaded<string>>((resolve, reject) => pending.push({ resolve, reject }));
    },
    answer(value: string, ttlMs?: number) {
      pending.shift()?.resolve(ttlMs === undefined ? { value } : { value, ttlMs });
    },
    fail() {
      pending.shift()?.reject(new Error("identity unavailable"));
    },
  };
}

const settle = () => new Promise((r) => setImmediate(r));

function cache(
  opts: { ttlMs?: number; refreshPoint?: () => number; maxRefreshing?: number; refreshGatherMs?: number } = {},
) {
  let t = 1_000_000;
  const c = new LoadingCache<string>({ max: 100, ttlMs: opts.ttlMs ?? 1000, now: () => t, ...opts });
  return { c, advance: (ms: number) => (t += ms) };
}

/** A cache with key "k" loaded as "v1" (and its life ahead of it) and the loader that did it. */
async function loadedCache(opts: Parameters<typeof cache>[0] = {}) {
  const made = cache(opts);
  const l = loader();
  const first = made.c.get("k", () => l.load());
  l.answer("v1");
  await first;
  return { ...made, l };
}

/** A cache with keys "a" and "b" loaded as "a1" and "b1", and the loader of each. */
async function twoLoadedKeys(opts: Parameters<typeof cache>[0]) {
  const made = cache(opts);
  const a = loader();
  const b = loader();
  const loads = [made.c.get("a", () => a.load()), made.c.get("b", () => b.load())];
  a.answer("a1");
  b.answer("b1");
  await Promise.all(loads);
  return { ...made, a, b };
}

describe("LoadingCache", () => {
  it("loads a missing key once for concurrent reads", async () => {
    const { c } = cache();
    const l = loader();
    const reads = [c.get("k", () => l.load()), c.get("k", () => l.load())];
    l.answer("v1");
    expect(await Promise.all(reads)).toEqual(["v1", "v1"]);
    expect(l.calls).toBe(1);
  });

  it("answers from the entry before its refresh point without loading", async () => {
    const { c, advance, l } = await loadedCache({ refreshPoint: () => 0.5 });
    advance(499);
    expect(await c.get("k", () => l.load())).toBe("v1");
    expect(l.calls).toBe(1);
  });

  it("past the refresh point answers at once from the entry and reloads it once in the background", async () => {
    const { c, advance, l } = await loadedCache({ refreshPoint: () => 0.5 });
    advance(500);
    // Answered without waiting for the reload, which is still pending.
    expect(await c.get("k", () => l.load())).toBe("v1");
    expect(await c.get("k", () => l.load())).toBe("v1");
    expect(l.calls).toBe(2);
    l.answer("v2");
    await settle();
    expect(await c.get("k", () => l.load())).toBe("v2");
    expect(l.calls).toBe(2);
    // The reloaded entry lives a whole TTL from its reload: past the first load's expiry, no wait.
    advance(600);
    expect(await c.get("k", () => l.load())).toBe("v2");
  });

  it("keeps serving after a failed refresh until the entry expires, retrying a second later", async () => {
    const { c, advance, l } = await loadedCache({ ttlMs: 10_000, refreshPoint: () => 0.5 });
    advance(5_000);
    expect(await c.get("k", () => l.load())).toBe("v1");
    l.fail();
    await settle();
    expect(await c.get("k", () => l.load())).toBe("v1");
    expect(l.calls).toBe(2);
    advance(1_000);
    expect(await c.get("k", () => l.load())).toBe("v1");
    expect(l.calls).toBe(3);
    l.fail();
    await settle();
    // Past the TTL the entry is gone: the read waits for a load, and its failure is the caller's.
    advance(4_001);
    const late = c.get("k", () => l.load());
    l.fail();
    await expect(late).rejects.toThrow("identity unavailable");
  });

  it("does not store a refresh that a purge overtook", async () => {
    const { c, advance, l } = await loadedCache({ refreshPoint: () => 0.5 });
    advance(500);
    await c.get("k", () => l.load());
    c.delete("k");
    l.answer("stale");
    await settle();
    const next = c.get("k", () => l.load());
    l.answer("fresh");
    expect(await next).toBe("fresh");
    expect(l.calls).toBe(3);
  });

  it("refreshes a short-lived (negative) answer within its own life", async () => {
    const { c, advance } = cache({ ttlMs: 30_000, refreshPoint: () => 0.5 });
    const l = loader();
    const first = c.get("k", () => l.load());
    l.answer("not found", 5_000);
    await first;
    advance(2_499);
    await c.get("k", () => l.load());
    expect(l.calls).toBe(1);
    advance(1);
    await c.get("k", () => l.load());
    expect(l.calls).toBe(2);
  });

  it("runs at most maxRefreshing refreshes at once; a busy read answers from its entry and a later read refreshes it", async () => {
    const { c, advance, a, b } = await twoLoadedKeys({ refreshPoint: () => 0.5, maxRefreshing: 1 });
    advance(500);
    expect(await c.get("a", () => a.load())).toBe("a1");
    expect(await c.get("b", () => b.load())).toBe("b1");
    expect([a.calls, b.calls]).toEqual([2, 1]);
    a.answer("a2");
    await settle();
    expect(await c.get("b", () => b.load())).toBe("b1");
    expect(b.calls).toBe(2);
    b.answer("b2");
    await settle();
    expect([await c.get("a", () => a.load()), await c.get("b", () => b.load())]).toEqual(["a2", "b2"]);
  });

  it("frees a refresh's place when it fails or a purge overtakes it", async () => {
    const { c, advance, a, b } = await twoLoadedKeys({ ttlMs: 10_000, refreshPoint: () => 0.5, maxRefreshing: 1 });
    advance(5000);
    await c.get("a", () => a.load());
    a.fail();
    await settle();
    await c.get("b", () => b.load());
    expect(b.calls).toBe(2);
    c.delete("b");
    b.answer("b2");
    await settle();
    advance(1000);
    expect(await c.get("a", () => a.load())).toBe("a1");
    expect(a.calls).toBe(3);
    a.answer("a2");
    await settle();
    expect(await c.get("a", () => a.load())).toBe("a2");
  });

  it("gathers the refreshes reads find due within refreshGatherMs and starts them together", async () => {
    const { c, advance, a, b } = await twoLoadedKeys({ refreshPoint: () => 0.5, refreshGatherMs: 20 });
    advance(500);
    const started: string[] = [];
    const loadOf = (name: string, l: ReturnType<typeof loader>) => () => {
      started.push(name);
      return l.load();
    };
    expect(await c.get("a", loadOf("a", a))).toBe("a1");
    expect(await c.get("b", loadOf("b", b))).toBe("b1");
    // A second read of a gathered key does not gather it twice.
    expect(await c.get("a", loadOf("a", a))).toBe("a1");
    expect(started).toEqual([]);
    await vi.waitFor(() => expect(started).toEqual(["a", "b"]));
    a.answer("a2");
    b.answer("b2");
    await settle();
    expect([await c.get("a", () => a.load()), await c.get("b", () => b.load())]).toEqual(["a2", "b2"]);
    expect([a.calls, b.calls]).toEqual([2, 2]);
  });

  it("counts gathered refreshes among maxRefreshing, and frees the place of one a purge drops", async () => {
    const { c, advance, a, b } = await twoLoadedKeys({
      refreshPoint: () => 0.5,
      maxRefreshing: 1,
      refreshGatherMs: 20,
    });
    advance(500);
    await c.get("a", () => a.load());
    await c.get("b", () => b.load());
    // "a" holds the one place; purged before its refresh starts, it never loads, and "b" may go.
    c.delete("a");
    await c.get("b", () => b.load());
    await new Promise((r) => setTimeout(r, 40));
    expect([a.calls, b.calls]).toEqual([1, 2]);
    b.answer("b2");
    await settle();
    expect(await c.get("b", () => b.load())).toBe("b2");
  });

  it("by default refreshes between half and four fifths of an entry's life", async () => {
    for (let i = 0; i < 20; i++) {
      const { c, advance, l } = await loadedCache({ ttlMs: 1000 });
      advance(499);
      await c.get("k", () => l.load());
      expect(l.calls).toBe(1);
      advance(301);
      await c.get("k", () => l.load());
      expect(l.calls).toBe(2);
    }
  });

  it("caches nothing with a TTL of 0", async () => {
    const { c } = cache({ ttlMs: 0 });
    const l = loader();
    const a = c.get("k", () => l.load());
    l.answer("v1");
    await a;
    const b = c.get("k", () => l.load());
    l.answer("v2");
    expect(await b).toBe("v2");
    expect(l.calls).toBe(2);
  });
});
