import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { gatewayConfigSpec } from "@platform/gateway/config";
import { ManualClock } from "@platform/kit/clock";
import { loadConfig } from "@platform/kit/config";
import { createLogger } from "@platform/kit/logger";
import { sandboxAccountId } from "@platform/sandbox";
import type { LightMyRequestResponse } from "fastify";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createEmbeddedPlatform, type EmbeddedPlatform } from "../src/platform.js";
import { startReceiver } from "./support/webhook-receiver.js";

// HTTP as integrators' tools expect it, through the gateway of the embedded platform: HEAD,
// conditional GETs, compression, strict query strings, bound cursors, idempotency conflicts
// that say what differed, and bodyless writes sent with a JSON content type.
const DOCS = "https://docs.http-test.example";
const API = "/api/v1alpha1";
const SEED = "http-conventions-test";
const clock = new ManualClock(new Date("2026-03-02T10:00:00Z"));
const acct = (key: string) => sandboxAccountId(SEED, key);

let platform: EmbeddedPlatform;
let key: string;
let otherOrgKey: string;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let n = 0;

type Method = "GET" | "HEAD" | "POST" | "PATCH" | "DELETE";
type Init = { headers?: Record<string, string>; body?: unknown; payload?: string; apiKey?: string };
function call(method: Method, url: string, init: Init = {}) {
  return platform.app.inject({
    method,
    url: `${API}${url}`,
    headers: {
      "x-platform-api-key": init.apiKey ?? key,
      ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
      ...(method === "POST" || method === "PATCH" ? { "idempotency-key": `http-${++n}` } : {}),
      ...init.headers,
    },
    ...(init.body !== undefined ? { payload: JSON.stringify(init.body) } : {}),
    ...(init.payload !== undefined ? { payload: init.payload } : {}),
  });
}
const problemType = (name: string) => `${DOCS}/platform-api/errors/${name}`;

function expectProblem(res: LightMyRequestResponse, status: number, name: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers["content-type"]).toContain("application/problem+json");
  const body = res.json();
  expect(body.type).toBe(problemType(name));
  return body as { detail: string; field?: string };
}

async function subscription(): Promise<string> {
  const res = await call("POST", "/webhook-subscriptions", {
    body: { endpointUrl: receiver.url, events: ["scheduling.smartscheduler.booked"] },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}

beforeAll(async () => {
  receiver = await startReceiver();
  platform = await createEmbeddedPlatform({
    clock,
    logger: createLogger("http-conventions-test", "silent"),
    gateway: loadConfig(gatewayConfigSpec, { PLATFORM_DOCS_URL: DOCS, LOG_LEVEL: "silent" }),
    sandboxSeed: SEED,
    seedSandbox: true,
    adminSecret: "http-conventions-test-admin",
    env: { WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true", WEBHOOKS_POLL_MS: "20", WEBHOOKS_TIMEOUT_MS: "2000" },
  });
  const keys = await platform.sandboxKeys();
  key = keys.find((k) => k.name === "acme-full")!.key;
  otherOrgKey = keys.find((k) => k.name === "umbrella-full")!.key;
});
afterAll(async () => {
  await platform.close();
  await receiver.close();
});
// A fresh minute of rate-limit budget for every test.
beforeEach(() => clock.advance(61_000));

/** Headers a HEAD must repeat; the rate-limit ones differ by one request's worth. */
const COMPARED = ["content-type", "content-length", "etag", "ratelimit-policy", "cache-control"];

describe("HEAD", () => {
  it("answers every GET route with the GET's headers and no body", async () => {
    for (const url of [
      "/organizations/me",
      "/organizations/me/entitlements",
      "/accounts?limit=2",
      `/accounts/${acct("analytical")}`,
      "/openapi.json",
    ]) {
      const get = await call("GET", url);
      const head = await call("HEAD", url);
      expect(head.statusCode, url).toBe(200);
      expect(head.body, url).toBe("");
      for (const name of COMPARED) expect(head.headers[name], `${url} ${name}`).toEqual(get.headers[name]);
      if (url !== "/openapi.json") expect(head.headers.ratelimit).toMatch(/^"read";r=\d+;t=\d+$/);
    }
  });

  it("announces the GET's content coding", async () => {
    const accept = { "accept-encoding": "br, gzip" };
    const get = await call("GET", "/accounts?limit=100", { headers: accept });
    const head = await call("HEAD", "/accounts?limit=100", { headers: accept });
    expect(get.headers["content-encoding"]).toBe("br");
    expect(head.headers["content-encoding"]).toBe("br");
    expect(head.headers["content-length"]).toEqual(get.headers["content-length"]);
    expect(head.body).toBe("");
  });

  it("answers the GET's errors with their status and headers, without the problem body", async () => {
    const head = await call("HEAD", "/organizations/me", { apiKey: "nope" });
    expect(head.statusCode).toBe(401);
    expect(head.headers["content-type"]).toContain("application/problem+json");
    expect(head.body).toBe("");
    expect((await call("HEAD", `/accounts/${acct("nope")}`)).statusCode).toBe(404);
  });

  it("is listed in Allow, and a method no route serves is still 405", async () => {
    const res = await call("DELETE", "/organizations/me/entitlements");
    expectProblem(res, 405, "method-not-allowed");
    expect(res.headers.allow).toBe("GET, HEAD");
  });

  it("serves the health probes", async () => {
    expect((await platform.app.inject({ method: "HEAD", url: "/healthz" })).statusCode).toBe(200);
    expect((await platform.app.inject({ method: "HEAD", url: "/readyz" })).statusCode).toBe(200);
  });
});

describe("conditional GET", () => {
  it('keeps the W/"<version>" ETag of organizations and users and answers 304 when it matches', async () => {
    const me = await call("GET", "/organizations/me");
    const etag = me.headers.etag as string;
    expect(etag).toMatch(/^W\/"\d+"$/);
    // Each key (and acting-on org) reads its own organization at this URL, and two orgs'
    // versions can be equal: a cache must keep them apart.
    expect(String(me.headers.vary)).toMatch(/X-Platform-Api-Key, X-Platform-Acting-On/);
    const strong = etag.slice(2);
    for (const ifNoneMatch of [etag, strong, `"other", ${etag}`, "*"]) {
      const res = await call("GET", "/organizations/me", { headers: { "if-none-match": ifNoneMatch } });
      expect(res.statusCode, `${ifNoneMatch} ${res.body}`).toBe(304);
      expect(res.body).toBe("");
      expect(res.headers.etag).toBe(etag);
      expect(String(res.headers.vary)).toMatch(/X-Platform-Api-Key, X-Platform-Acting-On/);
      expect(res.headers["content-type"]).toBeUndefined();
    }
    const changed = await call("GET", "/organizations/me", { headers: { "if-none-match": 'W/"0"' } });
    expect(changed.statusCode).toBe(200);
    expect(changed.json().id).toBe(me.json().id);

    const user = me.json().administrator?.userId ?? (await call("GET", "/users?limit=1")).json().items[0].id;
    const detail = await call("GET", `/users/${user}`);
    expect(detail.headers.etag).toMatch(/^W\/"\d+"$/);
    const again = await call("HEAD", `/users/${user}`, { headers: { "if-none-match": detail.headers.etag as string } });
    expect(again.statusCode).toBe(304);
  });

  it("gives every other single resource a weak ETag of its body", async () => {
    const url = `/accounts/${acct("analytical")}`;
    const first = await call("GET", url);
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^W\/"[\w-]{27}"$/);
    expect((await call("GET", url)).headers.etag).toBe(etag);
    expect((await call("GET", url, { headers: { "if-none-match": etag } })).statusCode).toBe(304);
    expect((await call("GET", url, { headers: { "if-none-match": 'W/"stale"' } })).statusCode).toBe(200);
    // Another resource has another tag.
    expect((await call("GET", `/accounts/${acct("cobol")}`)).headers.etag).not.toBe(etag);
  });

  it("leaves lists and errors without an ETag", async () => {
    expect((await call("GET", "/accounts?limit=2")).headers.etag).toBeUndefined();
    expect((await call("GET", `/accounts/${acct("nope")}`)).headers.etag).toBeUndefined();
  });
});

describe("compression", () => {
  it("sends brotli or gzip when accepted and the body is over 1 KB", async () => {
    const plain = await call("GET", "/accounts?limit=100");
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.rawPayload.length).toBeGreaterThan(1024);

    const br = await call("GET", "/accounts?limit=100", { headers: { "accept-encoding": "gzip, deflate, br" } });
    expect(br.headers["content-encoding"]).toBe("br");
    expect(br.headers.vary).toMatch(/accept-encoding/i);
    expect(JSON.parse(brotliDecompressSync(br.rawPayload).toString())).toEqual(plain.json());

    const gzip = await call("GET", "/accounts?limit=100", { headers: { "accept-encoding": "gzip" } });
    expect(gzip.headers["content-encoding"]).toBe("gzip");
    expect(JSON.parse(gunzipSync(gzip.rawPayload).toString())).toEqual(plain.json());

    const docs = await platform.app.inject({
      method: "GET",
      url: `${API}/openapi.json`,
      headers: { "accept-encoding": "br" },
    });
    expect(docs.headers["content-encoding"]).toBe("br");
    expect(docs.rawPayload.length).toBeLessThan(
      Buffer.byteLength(JSON.stringify((await call("GET", "/openapi.json")).json())) / 4,
    );
  });

  it("sends small answers and unknown encodings as they are", async () => {
    const small = await call("GET", "/organizations/me/entitlements", { headers: { "accept-encoding": "br, gzip" } });
    expect(small.statusCode).toBe(200);
    expect(small.rawPayload.length).toBeLessThan(1024);
    expect(small.headers["content-encoding"]).toBeUndefined();
    const zstd = await call("GET", "/accounts?limit=100", { headers: { "accept-encoding": "zstd" } });
    expect(zstd.headers["content-encoding"]).toBeUndefined();
    expect(zstd.json().items.length).toBeGreaterThan(1);
  });

  it("compresses problems and keeps the ETag of a compressed single resource", async () => {
    const url = `/accounts/${acct("analytical")}/related`;
    const plain = await call("GET", url);
    expect(plain.statusCode).toBe(200);
    const gzip = await call("GET", url, { headers: { "accept-encoding": "gzip" } });
    expect(gzip.headers.etag).toBe(plain.headers.etag);
    if (plain.rawPayload.length > 1024) expect(gzip.headers["content-encoding"]).toBe("gzip");
    const notModified = await call("GET", url, {
      headers: { "accept-encoding": "gzip", "if-none-match": plain.headers.etag as string },
    });
    expect(notModified.statusCode).toBe(304);
    expect(notModified.headers["content-encoding"]).toBeUndefined();
  });
});

describe("strict query strings", () => {
  it("refuses an unknown parameter of a list with 400 invalid-filter naming it", async () => {
    const body = expectProblem(await call("GET", "/deals?stag=Won"), 400, "invalid-filter");
    expect(body.field).toBe("stag");
    expect(body.detail).toContain("'stag'");
    expect(body.detail).toContain("stage");
    expect((await call("GET", "/deals?stage=Won")).statusCode).toBe(200);
  });

  it("refuses parameters on single resources and keeps the documented ones accepted", async () => {
    const body = expectProblem(
      await call("GET", `/accounts/${acct("analytical")}?expand=contacts`),
      400,
      "invalid-filter",
    );
    expect(body).toMatchObject({ field: "expand" });
    expect(body.detail).toMatch(/takes no query parameters/);
    expect((await call("GET", `/accounts/${acct("analytical")}/related?contactsLimit=5`)).statusCode).toBe(200);
    expect((await call("GET", "/buyer-signals/summary?periodDays=14")).statusCode).toBe(200);
    expect((await call("GET", "/email-blasts/top?limit=3&periodDays=30")).statusCode).toBe(200);
    expectProblem(await call("GET", "/buyer-signals/summary?period=14"), 400, "invalid-filter");
  });

  it("checks the query of writes too (after authentication)", async () => {
    const id = await subscription();
    expectProblem(await call("DELETE", `/webhook-subscriptions/${id}?force=true`), 400, "invalid-filter");
    expect((await call("GET", "/deals?stag=Won", { apiKey: "nope" })).statusCode).toBe(401);
  });
});

describe("cursors", () => {
  it("continue the list that minted them, for the org that received them", async () => {
    const first = (await call("GET", "/contacts?limit=1")).json();
    const cursor = encodeURIComponent(first.nextCursor as string);
    const second = await call("GET", `/contacts?limit=1&cursor=${cursor}`);
    expect(second.statusCode, second.body).toBe(200);
    expect(second.json().items[0].id).not.toBe(first.items[0].id);

    // Same sort (-updatedAt), other endpoint; other org; other account of the same endpoint.
    expectProblem(await call("GET", `/accounts?limit=1&cursor=${cursor}`), 400, "invalid-cursor");
    expectProblem(
      await call("GET", `/contacts?limit=1&cursor=${cursor}`, { apiKey: otherOrgKey }),
      400,
      "invalid-cursor",
    );
    const ofAccount = (await call("GET", `/accounts/${acct("analytical")}/contacts?limit=1`)).json();
    expect(ofAccount.nextCursor).toEqual(expect.any(String));
    const accountCursor = encodeURIComponent(ofAccount.nextCursor as string);
    expect(
      (await call("GET", `/accounts/${acct("analytical")}/contacts?limit=1&cursor=${accountCursor}`)).statusCode,
    ).toBe(200);
    expectProblem(
      await call("GET", `/accounts/${acct("cobol")}/contacts?limit=1&cursor=${accountCursor}`),
      400,
      "invalid-cursor",
    );
    expectProblem(await call("GET", `/contacts?limit=1&cursor=${accountCursor}`), 400, "invalid-cursor");
  });

  it("walk a whole list page by page", async () => {
    const all = (await call("GET", "/accounts?limit=100")).json().items.map((a: { id: string }) => a.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const url: string = `/accounts?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const page = (await call("GET", url)).json();
      seen.push(...page.items.map((a: { id: string }) => a.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all);
  });
});

describe("idempotency conflicts", () => {
  const subscriptionBody = (description: string) => ({
    endpointUrl: receiver.url,
    events: ["scheduling.smartscheduler.booked"],
    description,
  });
  const withKey = (k: string) => ({ "idempotency-key": k });

  it("say the body differed, or the endpoint", async () => {
    const k = `conflict-${++n}`;
    const first = await call("POST", "/webhook-subscriptions", { body: subscriptionBody("a"), headers: withKey(k) });
    expect(first.statusCode).toBe(201);
    const replay = await call("POST", "/webhook-subscriptions", { body: subscriptionBody("a"), headers: withKey(k) });
    expect(replay.statusCode).toBe(201);
    expect(replay.headers["x-idempotent-replay"]).toBe("true");
    expect(replay.json().id).toBe(first.json().id);

    const body = expectProblem(
      await call("POST", "/webhook-subscriptions", { body: subscriptionBody("b"), headers: withKey(k) }),
      422,
      "idempotency-key-conflict",
    );
    expect(body.detail).toMatch(/different request body/);
    const elsewhere = expectProblem(
      await call("POST", `/webhook-subscriptions/${first.json().id}/rotate-secret`, { headers: withKey(k) }),
      422,
      "idempotency-key-conflict",
    );
    expect(elsewhere.detail).toMatch(/another endpoint/);
  });

  it("say the query string differed when only it did (UTM parameters of a booking)", async () => {
    const list = (await call("GET", "/smart-schedules?name=intro")).json();
    const id = list.items[0].id as string;
    const detail = (await call("GET", `/smart-schedules/${id}`)).json();
    const region = detail.matchingForm.fields.find((f: { key: string }) => f.key === "region");
    const formValues = { region: region.options[0] };
    const avail = await call("POST", `/smart-schedules/${id}/availability`, { body: { formValues } });
    expect(avail.statusCode).toBe(200);
    const slot = avail.json().hostGroups.flat()[0].slots[0];
    const booking = {
      slotToken: slot.slotToken,
      attendee: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com" },
      formValues,
      surveyResponses: { "What would you like to discuss?": "HTTP" },
    };
    const k = `booking-${++n}`;
    const book = (query: string) => call("POST", `/scheduled-meetings${query}`, { body: booking, headers: withKey(k) });
    const first = await book("?utm_source=newsletter");
    expect(first.statusCode, first.body).toBe(201);
    const other = expectProblem(await book("?utm_source=ads"), 422, "idempotency-key-conflict");
    expect(other.detail).toMatch(/different query string/);
    expect(other.detail).not.toMatch(/body/);
    const replay = await book("?utm_source=newsletter");
    expect(replay.statusCode).toBe(201);
    expect(replay.headers["x-idempotent-replay"]).toBe("true");
  });
});

describe("bodyless writes with a JSON content type", () => {
  const json = { "content-type": "application/json" };

  it("accepts an empty body on POST …/test, POST …/rotate-secret and DELETE", async () => {
    const id = await subscription();
    const test = await call("POST", `/webhook-subscriptions/${id}/test`, { headers: json, payload: "" });
    expect(test.statusCode, test.body).toBe(202);
    const rotated = await call("POST", `/webhook-subscriptions/${id}/rotate-secret`, { headers: json, payload: "" });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const deleted = await call("DELETE", `/webhook-subscriptions/${id}`, {
      headers: { "content-type": "application/json; charset=utf-8" },
      payload: "",
    });
    expect(deleted.statusCode, deleted.body).toBe(204);
  });

  it("still refuses an empty body where one is expected, and a body that is not JSON", async () => {
    expectProblem(await call("POST", "/webhook-subscriptions", { headers: json, payload: "" }), 400, "malformed-json");
    const id = await subscription();
    expectProblem(
      await call("POST", `/webhook-subscriptions/${id}/test`, { headers: json, payload: "{" }),
      400,
      "malformed-json",
    );
  });
});
