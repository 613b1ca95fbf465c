import { seededId } from "@platform/kit/ids";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { bucketsFor } from "../src/rate-limit/limiter.js";
import { memoryRateLimitStore } from "../src/rate-limit/memory-store.js";
import type { RateLimitStore } from "../src/rate-limit/store.js";
import {
  API,
  buildTestGateway,
  CHILD_ORG,
  expectProblem,
  get,
  ORG,
  PARTNER_ORG,
  PARTNER_SCOPES,
  SCHEDULE,
  type TestGateway,
} from "./harness.js";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.app.close();
  gw = undefined;
});

async function gateway(opts: Parameters<typeof buildTestGateway>[0] = {}) {
  gw = await buildTestGateway(opts);
  const key = gw.identity.addToken({ orgId: PARTNER_ORG, scopes: PARTNER_SCOPES });
  return { ...gw, key };
}

/** A write-tier request (revenue is not faked in the harness: the route answers 501, after the limiter). */
function write(app: FastifyInstance, key: string, headers: Record<string, string> = {}) {
  return app.inject({
    method: "PATCH",
    url: `${API}/deals/${seededId("deal_", "gw-test", "rate-limit")}`,
    headers: { "x-platform-api-key": key, "idempotency-key": "k-1", ...headers },
    payload: { name: "Renamed" },
  });
}

async function writes(app: FastifyInstance, key: string, n: number, headers: Record<string, string> = {}) {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) statuses.push((await write(app, key, headers)).statusCode);
  return statuses;
}

describe("rate limits", () => {
  it("sends the RateLimit headers of the tier on success", async () => {
    const { app, key } = await gateway();
    const res = await get(app, `${API}/organizations/me`, key);
    expect(res.statusCode).toBe(200);
    expect(res.headers["ratelimit-policy"]).toBe('"read";q=300;w=60');
    expect(res.headers.ratelimit).toBe('"read";r=299;t=60');
  });

  it("allows 20 writes per minute, then 429 with an exact Retry-After, on a rolling window", async () => {
    const { app, key, clock } = await gateway();
    expect(await writes(app, key, 10)).toEqual(Array(10).fill(501));
    clock.advance(30_000);
    expect(await writes(app, key, 10)).toEqual(Array(10).fill(501));

    const refused = await write(app, key);
    expectProblem(refused, "rate-limit-exceeded");
    expect(refused.headers["retry-after"]).toBe("30");
    expect(refused.headers["ratelimit-policy"]).toBe('"write";q=20;w=60');
    expect(refused.headers.ratelimit).toBe('"write";r=0;t=30');

    clock.advance(29_999);
    expect((await write(app, key)).headers["retry-after"]).toBe("1");
    // t+60 s+ε: the ten hits of t have left; the ten of t+30 s still count.
    clock.advance(2);
    const freed = await write(app, key);
    expect(freed.statusCode).toBe(501);
    expect(freed.headers.ratelimit).toBe('"write";r=9;t=30');
    expect(await writes(app, key, 9)).toEqual(Array(9).fill(501));
    const again = await write(app, key);
    expect(again.statusCode).toBe(429);
    expect(again.headers["retry-after"]).toBe("30");
  });

  it("does not count refused requests", async () => {
    const { app, key, clock } = await gateway();
    await writes(app, key, 20);
    expect(await writes(app, key, 5)).toEqual(Array(5).fill(429));
    clock.advance(60_000);
    expect(await writes(app, key, 20)).toEqual(Array(20).fill(501));
  });

  it("keeps read, availability and write buckets independent", async () => {
    const { app, identity } = await gateway();
    const key = identity.addToken({
      orgId: ORG,
      scopes: ["deals:write", "smart-scheduling:read", "organizations:read"],
    });
    await writes(app, key, 20);
    expect((await write(app, key)).statusCode).toBe(429);
    const availability = await app.inject({
      method: "POST",
      url: `${API}/smart-schedules/${SCHEDULE}/availability`,
      headers: { "x-platform-api-key": key },
      payload: { formValues: { region: "emea" } },
    });
    expect(availability.statusCode).toBe(200);
    expect(availability.headers["ratelimit-policy"]).toBe('"availability";q=60;w=60');
    expect(availability.headers.ratelimit).toBe('"availability";r=59;t=60');
    const read = await get(app, `${API}/organizations/me`, key);
    expect(read.statusCode).toBe(200);
  });

  it("gives each delegated (token, child) pair buckets of its own", async () => {
    const { app, key } = await gateway();
    const child = { "x-platform-acting-on": CHILD_ORG };
    await writes(app, key, 20);
    expect((await write(app, key)).statusCode).toBe(429);
    // The token's own bucket is full; its sub-bucket for the child is not.
    const delegated = await write(app, key, child);
    expect(delegated.statusCode).toBe(501);
    expect(delegated.headers.ratelimit).toBe('"write";r=19;t=60');
    await writes(app, key, 19, child);
    const refused = await write(app, key, child);
    expectProblem(refused, "rate-limit-exceeded");
    expect(refused.headers["retry-after"]).toBe("60");
  });

  it("enforces 50,000 requests per UTC day, with Retry-After until midnight", async () => {
    const store = memoryRateLimitStore();
    const { app, key, clock, identity } = await gateway({ store });
    clock.set("2026-01-15T23:59:30.250Z");
    const [, daily] = bucketsFor("read", { tokenId: identity.tokenOf(key).tokenId });
    for (let i = 0; i < 50_000; i++) await store.hit([daily!], clock.now().getTime() - 3_600_000);

    const refused = await get(app, `${API}/organizations/me`, key);
    const body = expectProblem(refused, "rate-limit-exceeded");
    expect(body.detail).toMatch(/daily quota/);
    expect(refused.headers["retry-after"]).toBe("30");
    // The minute bucket still has room; the refusal did not use any of it.
    expect(refused.headers.ratelimit).toBe('"read";r=300;t=0');

    clock.set("2026-01-16T00:00:00.000Z");
    expect((await get(app, `${API}/organizations/me`, key)).statusCode).toBe(200);
  });

  it("lets requests through when the store fails, rather than taking the API down", async () => {
    const broken: RateLimitStore = {
      hit: async () => {
        throw new Error("ECONNREFUSED 127.0.0.1:6379");
      },
    };
    const { app, key } = await gateway({ store: broken });
    const res = await get(app, `${API}/organizations/me`, key);
    expect(res.statusCode).toBe(200);
    expect(res.headers.ratelimit).toBeUndefined();
  });

  it("applies after authentication: unauthenticated requests use no quota", async () => {
    const { app, key } = await gateway();
    for (let i = 0; i < 25; i++) await write(app, "pk_live_bad");
    expect((await write(app, key)).headers.ratelimit).toBe('"write";r=19;t=60');
    const other = gw!.identity.addToken({ orgId: ORG, scopes: ["organizations:read"] });
    const res = await write(app, other);
    expectProblem(res, "insufficient-scope", { requiredScope: "deals:write" });
    expect(res.headers.ratelimit).toBeUndefined();
  });
});
