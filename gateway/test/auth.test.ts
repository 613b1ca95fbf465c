import { create, toJson } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { TokenRevokedSchema } from "@platform/contracts/events/identity";
import { RESOLVE_API_KEYS_MAX } from "@platform/contracts/identity";
import { hashApiKey, seededApiKey } from "@platform/kit/api-keys";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import { InProcessBus } from "@platform/kit/in-process-bus";
import { toBusMessage } from "@platform/kit/outbox";
import { afterEach, describe, expect, it, vi } from "vitest";
import { BATCH_RETRY_MS } from "../src/auth.js";
import { API, buildTestGateway, expectProblem, get, ORG, type TestGateway } from "./harness.js";

const ME = `${API}/organizations/me`;
let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.app.close();
  gw = undefined;
});

async function gateway(opts: Parameters<typeof buildTestGateway>[0] = {}) {
  gw = await buildTestGateway(opts);
  return gw;
}

describe("API key authentication", () => {
  it("answers 401 missing-trust-header without a key, or with a key of the wrong shape", async () => {
    const { app } = await gateway();
    expectProblem(await get(app, ME), "missing-trust-header");
    expectProblem(await get(app, ME, "pk_live_short"), "missing-trust-header");
    expectProblem(await get(app, ME, `pk_test_${"a".repeat(48)}`), "missing-trust-header");
  });

  it("answers 401 unknown-subscription for a well-formed unknown key and for a revoked one", async () => {
    const { app, identity, clock } = await gateway();
    expectProblem(await get(app, ME, seededApiKey("gw-test", "never-issued")), "unknown-subscription");
    const revoked = identity.addToken({
      orgId: ORG,
      scopes: ["organizations:read"],
      revokeTime: new Date(clock.now().getTime() - 1000),
    });
    expectProblem(await get(app, ME, revoked), "unknown-subscription");
  });

  it("answers 401 subscription-expired with expiredAt once the expiry has passed", async () => {
    const { app, identity, clock } = await gateway();
    const expireTime = new Date(clock.now().getTime() + 10_000);
    const key = identity.addToken({ orgId: ORG, scopes: ["organizations:read"], expireTime });
    expect((await get(app, ME, key)).statusCode).toBe(200);
    // The cached answer is re-judged against the clock on every request.
    clock.advance(10_000);
    expectProblem(await get(app, ME, key), "subscription-expired", { expiredAt: "2026-01-15T12:00:10.000Z" });
  });

  it("caches resolved keys for TOKEN_CACHE_TTL_MS and unknown keys for about 5 s", async () => {
    const { app, identity, clock } = await gateway({ config: { TOKEN_CACHE_TTL_MS: 30_000 } });
    const key = identity.addToken({ orgId: ORG, scopes: ["organizations:read"] });
    await get(app, ME, key);
    await get(app, ME, key);
    expect(identity.calls.resolveApiKey).toBe(1);
    clock.advance(30_001);
    await get(app, ME, key);
    expect(identity.calls.resolveApiKey).toBe(2);

    const unknown = seededApiKey("gw-test", "not-yet");
    expectProblem(await get(app, ME, unknown), "unknown-subscription");
    identity.tokens.set(hashApiKey(unknown), { tokenId: "tok_new", orgId: ORG, scopes: ["organizations:read"] });
    expectProblem(await get(app, ME, unknown), "unknown-subscription");
    expect(identity.calls.resolveApiKey).toBe(3);
    clock.advance(5_001);
    expect((await get(app, ME, unknown)).statusCode).toBe(200);
  });

  it("reloads a key in use before its TTL ends, without the request waiting for identity", async () => {
    const { app, identity, clock } = await gateway({ config: { TOKEN_CACHE_TTL_MS: 30_000 } });
    const key = identity.addToken({ orgId: ORG, scopes: ["organizations:read"] });
    await get(app, ME, key);
    identity.tokenOf(key).revokeTime = clock.now();
    // Past four fifths of its life the entry still answers, and is reloaded behind the request.
    clock.advance(24_000);
    expect((await get(app, ME, key)).statusCode).toBe(200);
    // The reload goes out with the look-ups of the same turn of the event loop, after the answer.
    await vi.waitFor(() => expect(identity.calls.resolveApiKey).toBe(2));
    // The reload saw the revocation before the TTL would have (it lands behind that request).
    await vi.waitFor(async () => expectProblem(await get(app, ME, key), "unknown-subscription"));
    expect(identity.calls.resolveApiKey).toBe(2);
  });

  it("refreshes the keys that came due together in one ResolveApiKeys call", async () => {
    const { app, identity, clock } = await gateway({ config: { TOKEN_CACHE_TTL_MS: 30_000 } });
    const keys = Array.from({ length: 20 }, () => identity.addToken({ orgId: ORG, scopes: ["organizations:read"] }));
    await Promise.all(keys.map((key) => get(app, ME, key)));
    expect(identity.calls.resolveApiKeys).toBe(1);
    // Past every entry's refresh point: each request is answered from the cache, and the
    // refreshes go out together (one key a call, two at a time, would have renewed two).
    clock.advance(24_000);
    const results = await Promise.all(keys.map((key) => get(app, ME, key)));
    expect(results.map((r) => r.statusCode)).toEqual(keys.map(() => 200));
    await vi.waitFor(() => expect(identity.calls.resolveApiKey).toBe(40));
    expect(identity.calls.resolveApiKeys).toBe(2);
  });

  it("resolves a key once for concurrent first requests", async () => {
    const { app, identity } = await gateway();
    const key = identity.addToken({ orgId: ORG, scopes: ["organizations:read"] });
    const results = await Promise.all(Array.from({ length: 10 }, () => get(app, ME, key)));
    expect(results.map((r) => r.statusCode)).toEqual(Array(10).fill(200));
    expect(identity.calls.resolveApiKey).toBe(1);
  });

  it("forgets a key when identity publishes its revocation", async () => {
    const bus = new InProcessBus();
    const { app, identity, clock } = await gateway({ bus });
    const key = identity.addToken({ orgId: ORG, scopes: ["organizations:read"] });
    expect((await get(app, ME, key)).statusCode).toBe(200);
    const token = identity.tokenOf(key);
    token.revokeTime = clock.now();
    // Still cached: without the event the revocation would only bite after the TTL.
    expect((await get(app, ME, key)).statusCode).toBe(200);

    const data = create(TokenRevokedSchema, {
      tokenId: token.tokenId,
      orgId: ORG,
      keyHash: hashApiKey(key),
      revokeTime: timestampFromDate(clock.now()),
    });
    const envelope = {
      id: "evt-1",
      type: EVENT_TYPES.tokenRevoked,
      source: "identity",
      time: clock.now().toISOString(),
      data: toJson(TokenRevokedSchema, data),
    };
    await bus.publish(TOPICS.identity, [toBusMessage(envelope, ORG)]);
    await bus.idle();
    expectProblem(await get(app, ME, key), "unknown-subscription");
    await bus.close();
  });

  it("skips identity events it cannot read instead of stalling on them", async () => {
    const bus = new InProcessBus();
    const { app, identity } = await gateway({ bus });
    const key = identity.addToken({ orgId: ORG, scopes: ["organizations:read"] });
    await bus.publish(TOPICS.identity, [{ key: ORG, value: Buffer.from("{"), headers: { ce_type: "x" } }]);
    await bus.idle();
    expect((await get(app, ME, key)).statusCode).toBe(200);
    await bus.close();
  });

  it("exposes the purge hook", async () => {
    const { app, identity } = await gateway();
    const key = identity.addToken({ orgId: ORG, scopes: ["organizations:read"] });
    await get(app, ME, key);
    app.purge.apiKey(hashApiKey(key), "tok_not_streaming");
    await get(app, ME, key);
    expect(identity.calls.resolveApiKey).toBe(2);
  });

  it("looks up the keys new in the same turn together, at most RESOLVE_API_KEYS_MAX a call", async () => {
    const { app, identity } = await gateway();
    const keys = Array.from({ length: RESOLVE_API_KEYS_MAX + 20 }, (_, i) =>
      identity.addToken({ orgId: ORG, scopes: i % 2 ? ["organizations:read"] : ["deals:read"] }),
    );
    const unknown = seededApiKey("gw-test", "never-issued-in-a-batch");
    const results = await Promise.all([...keys, unknown].map((key) => get(app, ME, key)));
    // Each key's own answer: its scopes decide, an unknown key is refused.
    expect(results.slice(0, keys.length).map((r) => r.statusCode)).toEqual(keys.map((_, i) => (i % 2 ? 200 : 403)));
    expectProblem(results[keys.length]!, "unknown-subscription");
    expect(identity.calls.resolveApiKeys).toBe(2);
    expect(identity.calls.resolveApiKey).toBe(keys.length + 1);
    // Cached, the unknown one too (for NEGATIVE_TTL_MS).
    await Promise.all([...keys, unknown].map((key) => get(app, ME, key)));
    expect(identity.calls.resolveApiKeys).toBe(2);
  });

  it("fails every request of a batch identity could not answer, and caches none of them", async () => {
    const { app, identity } = await gateway();
    const keys = [1, 2, 3].map(() => identity.addToken({ orgId: ORG, scopes: ["organizations:read"] }));
    identity.failNext = new ConnectError("connection refused", Code.Unavailable);
    for (const res of await Promise.all(keys.map((key) => get(app, ME, key)))) {
      expectProblem(res, "service-unavailable");
    }
    expect(identity.calls.resolveApiKeys).toBe(1);
    expect((await Promise.all(keys.map((key) => get(app, ME, key)))).map((r) => r.statusCode)).toEqual([200, 200, 200]);
    expect(identity.calls.resolveApiKeys).toBe(2);
  });

  it("looks keys up one call each from an identity without ResolveApiKeys, and tries the batch again later", async () => {
    const { app, identity, clock } = await gateway();
    identity.batchUnimplemented = true;
    const keys = [1, 2, 3].map(() => identity.addToken({ orgId: ORG, scopes: ["organizations:read"] }));
    const unknown = seededApiKey("gw-test", "never-issued-old-identity");
    const results = await Promise.all([...keys, unknown].map((key) => get(app, ME, key)));
    expect(results.slice(0, 3).map((r) => r.statusCode)).toEqual([200, 200, 200]);
    expectProblem(results[3]!, "unknown-subscription");
    expect(identity.calls.resolveApiKey).toBe(4);
    expect(identity.calls.resolveApiKeys).toBe(0);

    // Within BATCH_RETRY_MS the batch is not tried again; after it, it is.
    identity.batchUnimplemented = false;
    const later = identity.addToken({ orgId: ORG, scopes: ["organizations:read"] });
    expect((await get(app, ME, later)).statusCode).toBe(200);
    expect(identity.calls.resolveApiKeys).toBe(0);
    clock.advance(BATCH_RETRY_MS);
    const last = identity.addToken({ orgId: ORG, scopes: ["organizations:read"] });
    expect((await get(app, ME, last)).statusCode).toBe(200);
    expect(identity.calls.resolveApiKeys).toBe(1);
  });

  it("answers 503 when identity cannot be reached, and caches nothing", async () => {
    const { app, identity } = await gateway();
    const key = identity.addToken({ orgId: ORG, scopes: ["organizations:read"] });
    identity.failNext = new ConnectError("connection refused", Code.Unavailable);
    expectProblem(await get(app, ME, key), "service-unavailable");
    expect((await get(app, ME, key)).statusCode).toBe(200);
  });

  it("answers 500, not 401, when the services reject the gateway's signature (misconfigured secret)", async () => {
    const { app, identity } = await gateway({ serviceSecret: "another-secret-0123456789" });
    const key = identity.addToken({ orgId: ORG, scopes: ["organizations:read"] });
    expectProblem(await get(app, ME, key), "internal");
  });

  it("signs the context the services verify", async () => {
    const { app, identity } = await gateway();
    const key = identity.addToken({ orgId: ORG, scopes: ["organizations:read", "users:read"] });
    const res = await get(app, ME, key);
    expect(identity.contexts).toEqual([
      {
        principal: "api",
        requestId: res.headers["x-request-id"],
        orgId: ORG,
        tokenId: identity.tokenOf(key).tokenId,
        scopes: ["organizations:read", "users:read"],
      },
    ]);
  });
});

describe("X-Request-Id", () => {
  it("reuses a sane incoming id and replaces anything else", async () => {
    const { app, identity } = await gateway();
    const key = identity.addToken({ orgId: ORG, scopes: ["organizations:read"] });
    const echoed = await get(app, ME, key, { "x-request-id": "trace-42.abc:def_1" });
    expect(echoed.headers["x-request-id"]).toBe("trace-42.abc:def_1");
    expect(identity.contexts[0]?.requestId).toBe("trace-42.abc:def_1");

    for (const bad of ["has space", "x".repeat(129), "<script>"]) {
      const res = await get(app, ME, undefined, { "x-request-id": bad });
      expect(res.headers["x-request-id"]).toMatch(/^req_[0-9a-z]{24}$/);
      expectProblem(res, "missing-trust-header");
    }
  });

  it("is on every response: success, problem, not found, health", async () => {
    const { app, identity } = await gateway();
    const key = identity.addToken({ orgId: ORG, scopes: ["organizations:read"] });
    for (const res of [
      await get(app, ME, key),
      await get(app, `${API}/organizations/me/entitlements`, key),
      await get(app, `${API}/nothing-here`),
      await get(app, "/healthz"),
      await get(app, `${API}/openapi.json`),
    ]) {
      expect(res.headers["x-request-id"]).toMatch(/^req_/);
    }
  });
});
