import { Code, ConnectError, createRouterTransport } from "@connectrpc/connect";
import { seededId } from "@platform/kit/ids";
import { ALL_SCOPES } from "@platform/kit/scopes";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { API_PREFIX } from "../src/route.js";
import * as analytics from "../src/routes/analytics.js";
import * as crm from "../src/routes/crm.js";
import * as revenue from "../src/routes/revenue.js";
import * as webhooks from "../src/routes/webhooks.js";
import { createServiceClients, type ServiceTransports } from "../src/services.js";
import {
  API,
  buildTestGateway,
  expectProblem,
  get,
  ORG,
  PLAIN_MEETING,
  SCHEDULE,
  type TestGateway,
} from "./harness.js";

let gw: TestGateway;
let key: string;
const DEAL = seededId("deal_", "gw-test", "deal");
/** Route specs only need clients to close over; none is called through these. */
const gw0Clients = createServiceClients(
  new Proxy({}, { get: () => createRouterTransport(() => {}) }) as ServiceTransports,
);

beforeAll(async () => {
  gw = await buildTestGateway({ config: { BODY_LIMIT_BYTES: 1024 } });
  key = gw.identity.addToken({ orgId: ORG, scopes: [...ALL_SCOPES].filter((s) => s !== "partner:act-as-child") });
});
afterAll(async () => {
  await gw.app.close();
});
// Fresh rate-limit windows for every test, so no test inherits another's writes.
beforeEach(() => gw.clock.advance(60_000));

function send(
  method: "POST" | "PATCH" | "PUT" | "DELETE",
  url: string,
  init: { body?: string; headers?: Record<string, string> } = {},
) {
  return gw.app.inject({
    method,
    url,
    headers: { "x-platform-api-key": key, "idempotency-key": "key-1", ...init.headers },
    ...(init.body !== undefined ? { payload: init.body } : {}),
  });
}
const json = { "content-type": "application/json" };

describe("routing errors", () => {
  it("answers 400 invalid-resource-id, as problem+json, for a path id longer than the router accepts", async () => {
    const res = await get(gw.app, `${API}/smart-schedules/sched_${"z".repeat(300)}`, key);
    expectProblem(res, "invalid-resource-id");
  });

  it("answers 400 invalid-request for a URL that does not decode", async () => {
    expectProblem(await get(gw.app, `${API}/users/%E0%A4%A`, key), "invalid-request");
  });

  it("answers 404 not-found for an unknown path, with or without a key", async () => {
    expectProblem(await get(gw.app, `${API}/no-such-thing`), "not-found");
    expectProblem(await get(gw.app, `${API}/no-such-thing`, key), "not-found");
    expectProblem(await get(gw.app, "/elsewhere"), "not-found");
  });

  it("answers 405 method-not-allowed with Allow for a known path", async () => {
    const entitlements = await send("DELETE", `${API}/organizations/me/entitlements`);
    expectProblem(entitlements, "method-not-allowed");
    expect(entitlements.headers.allow).toBe("GET, HEAD");
    const subscription = await send("PUT", `${API}/webhook-subscriptions/sub_1yzefm0450baq05dn6dz18k6`, {
      body: "{}",
      headers: json,
    });
    expectProblem(subscription, "method-not-allowed");
    expect(subscription.headers.allow).toBe("DELETE, GET, HEAD, PATCH");
    const deal = await send("POST", `${API}/deals/${DEAL}`, { body: "{}", headers: json });
    expect(deal.headers.allow).toBe("GET, HEAD, PATCH");
  });

  it("answers 415 unsupported-media-type for a body that is not JSON", async () => {
    expectProblem(
      await send("POST", `${API}/deals`, { body: "name=x", headers: { "content-type": "text/plain" } }),
      "unsupported-media-type",
    );
    expectProblem(
      await send("PATCH", `${API}/deals/${DEAL}`, {
        body: "name=x",
        headers: { "content-type": "application/x-www-form-urlencoded" },
      }),
      "unsupported-media-type",
    );
    expectProblem(
      await send("POST", `${API}/deals`, { body: "{}", headers: { "content-type": "" } }),
      "unsupported-media-type",
    );
  });

  it("accepts JSON media types with parameters and +json suffixes", async () => {
    const url = `${API}/smart-schedules/${SCHEDULE}/availability`;
    const body = JSON.stringify({ formValues: { region: "emea" }, preview: true });
    const charset = await send("POST", url, { body, headers: { "content-type": "application/json; charset=utf-8" } });
    expect(charset.statusCode, charset.body).toBe(200);
    const suffix = await send("POST", url, { body, headers: { "content-type": "application/vnd.platform+json" } });
    expect(suffix.statusCode, suffix.body).toBe(200);
  });

  it("answers 400 malformed-json for a body that does not parse", async () => {
    expectProblem(await send("POST", `${API}/deals`, { body: '{"name": ', headers: json }), "malformed-json");
    expectProblem(await send("POST", `${API}/deals`, { body: "", headers: json }), "malformed-json");
  });

  it("answers 413 payload-too-large above BODY_LIMIT_BYTES", async () => {
    const big = JSON.stringify({ name: "x".repeat(2000) });
    expectProblem(await send("POST", `${API}/deals`, { body: big, headers: json }), "payload-too-large");
  });

  it("answers 400 invalid-field naming the field for a body that fails its schema", async () => {
    const url = `${API}/organizations/${ORG}`;
    const json = { "content-type": "application/json", "if-match": 'W/"7"' };
    const wrongType = expectProblem(
      await send("PATCH", url, { body: JSON.stringify({ employeeCount: "many" }), headers: json }),
      "invalid-field",
      { field: "employeeCount" },
    );
    expect(wrongType.detail).toContain("employeeCount");
    // JSON carries types: a numeric string is not a number.
    expectProblem(
      await send("PATCH", url, { body: JSON.stringify({ employeeCount: "5" }), headers: json }),
      "invalid-field",
    );
    const outOfRange = expectProblem(
      await send("PATCH", url, { body: JSON.stringify({ employeeCount: 0 }), headers: json }),
      "invalid-field",
    );
    expect(outOfRange.detail).toContain("employeeCount");
    const unknown = expectProblem(
      await send("PATCH", url, { body: JSON.stringify({ administrator: { userId: "usr_x" } }), headers: json }),
      "invalid-field",
      { field: "administrator" },
    );
    expect(unknown.detail).toContain("administrator");
    const valid = await send("PATCH", url, { body: JSON.stringify({ name: "Acme 2" }), headers: json });
    expect(valid.statusCode).toBe(200);
  });

  it("maps a failed body schema to the route's own problem where the spec says so", async () => {
    const url = `${API}/smart-schedules/${SCHEDULE}/availability`;
    const body = expectProblem(
      await send("POST", url, { body: JSON.stringify({ formValues: {}, durationMinutes: "30" }), headers: json }),
      "availability-request-invalid",
      { field: "durationMinutes" },
    );
    expect(body.detail).toContain("durationMinutes");
    expectProblem(
      await send("POST", url, { body: JSON.stringify({}), headers: json }),
      "availability-request-invalid",
      {
        field: "formValues",
      },
    );
    const valid = await send("POST", url, {
      body: JSON.stringify({ formValues: { region: "emea" }, preview: true }),
      headers: json,
    });
    expect(valid.statusCode).toBe(200);
  });

  it("answers 400 invalid-field naming limit when it is not a number, and leaves clamping to the service", async () => {
    const body = expectProblem(await get(gw.app, `${API}/deals?limit=abc`, key), "invalid-field", { field: "limit" });
    expect(body.detail).toContain("limit");
    expectProblem(await get(gw.app, `${API}/deals?limit=500`, key), "not-implemented");
    expectProblem(await get(gw.app, `${API}/deals?limit=0&stage=won&stage=lost`, key), "not-implemented");
  });

  it("answers 400 invalid-resource-id for a path id of the wrong prefix or shape", async () => {
    for (const url of [
      `${API}/organizations/acme`,
      `${API}/organizations/org_UPPERCASE0000000000000000`,
      `${API}/deals/${ORG}`,
      `${API}/insights/${DEAL}`,
      `${API}/webhook-subscriptions/sub_1yzefm0450baq05dn6dz18k6/deliveries/del_1/redeliver`,
    ]) {
      const method = url.endsWith("redeliver") ? "POST" : "GET";
      const res = await gw.app.inject({ method, url, headers: { "x-platform-api-key": key } });
      expectProblem(res, "invalid-resource-id");
    }
    expectProblem(await get(gw.app, `${API}/insights/${seededId("prof_", "gw-test", "p")}`, key), "not-implemented");
  });

  it("requires Idempotency-Key where the spec does, up to 255 characters", async () => {
    const noKey = await gw.app.inject({
      method: "POST",
      url: `${API}/deals`,
      headers: { "x-platform-api-key": key, ...json },
      payload: "{}",
    });
    expectProblem(noKey, "idempotency-key-required");
    expectProblem(
      await send("POST", `${API}/deals`, { body: "{}", headers: { ...json, "idempotency-key": "" } }),
      "idempotency-key-required",
    );
    expectProblem(
      await send("POST", `${API}/deals`, { body: "{}", headers: { ...json, "idempotency-key": "k".repeat(256) } }),
      "invalid-field",
      { field: "Idempotency-Key" },
    );
    // 255 characters pass; revenue is not faked here, so the call itself is a 501.
    expectProblem(
      await send("POST", `${API}/deals/${DEAL}/insights/profile`, {
        body: "{}",
        headers: { ...json, "idempotency-key": "k".repeat(255) },
      }),
      "not-implemented",
    );
    // DELETE of a meeting takes none.
    const cancel = await gw.app.inject({
      method: "DELETE",
      url: `${API}/scheduled-meetings/${PLAIN_MEETING}`,
      headers: { "x-platform-api-key": key },
    });
    expect(cancel.statusCode).toBe(204);
  });

  it("answers 500 internal with a requestId and nothing of the cause", async () => {
    gw.identity.failNext = new Error('relation "secret_table" does not exist');
    const res = await get(gw.app, `${API}/organizations/me`, key);
    const body = expectProblem(res, "internal");
    expect(res.body).not.toContain("secret_table");
    expect(body.requestId).toMatch(/^req_/);
  });

  it("answers 500 internal for a gateway bug too", async () => {
    const acme = gw.identity.orgs.get(ORG)!;
    gw.identity.orgs.set(ORG, { ...acme, administrator: undefined });
    try {
      const res = await get(gw.app, `${API}/organizations/me`, key);
      expectProblem(res, "internal");
      expect(res.body).not.toContain("administrator");
    } finally {
      gw.identity.orgs.set(ORG, acme);
    }
  });

  it("answers 503 service-unavailable when a service is down", async () => {
    gw.identity.failNext = new ConnectError("upstream connect error", Code.Unavailable);
    expectProblem(await get(gw.app, `${API}/organizations/me/entitlements`, key), "service-unavailable");
  });
});

describe("routes of contexts this harness does not fake", () => {
  const idFor = (prefix: string | readonly string[]) =>
    seededId(typeof prefix === "string" ? prefix : prefix[0]!, "gw-test", "unfaked");
  const query: Record<string, string> = { getDealBySource: "?sourceType=crm&sourceId=006xx" };
  // Their services are empty routers here: every call is "unimplemented", which the gateway
  // answers 501 not-implemented, after the whole guard ran (their behaviour is tested end to
  // end on the embedded platform in runtime/test).
  const unfaked = [crm, revenue, analytics, webhooks]
    .flatMap((module) => module.routes(gw0Clients))
    .filter((r) => r.method === "GET");

  it.each(unfaked.map((r) => [`${r.method} ${r.url}`, r] as const))(
    "%s passes the guard and answers 501 from a service without the RPC",
    async (_, route) => {
      const path = route.url.replace(/:(\w+)/g, (_m, name: string) =>
        route.ids?.[name] ? idFor(route.ids[name]) : "profile",
      );
      const fresh = gw.identity.addToken({
        orgId: ORG,
        scopes: [...ALL_SCOPES].filter((s) => s !== "partner:act-as-child"),
      });
      const res = await gw.app.inject({
        method: route.method,
        url: `${API_PREFIX}${path}${query[route.operationId] ?? ""}`,
        headers: { "x-platform-api-key": fresh },
      });
      expectProblem(res, "not-implemented");
      expect(res.headers["ratelimit-policy"]).toBe(
        `"${route.tier}";q=${{ read: 300, availability: 60, write: 20 }[route.tier]};w=60`,
      );
    },
  );

  it("still demands a key and the route's scope", async () => {
    expectProblem(await get(gw.app, `${API}/deals`), "missing-trust-header");
    const narrow = gw.identity.addToken({ orgId: ORG, scopes: ["contacts:read", "deals:read"] });
    expectProblem(await get(gw.app, `${API}/accounts`, narrow), "insufficient-scope", {
      requiredScope: "accounts:read",
    });
    // Two scopes: the one missing is named.
    expectProblem(
      await get(gw.app, `${API}/accounts/${seededId("acct_", "gw-test", "a")}/contacts`, narrow),
      "insufficient-scope",
      { requiredScope: "accounts:read" },
    );
    const webhooksReader = gw.identity.addToken({ orgId: ORG, scopes: ["webhooks:read"] });
    expectProblem(
      await send("POST", `${API}/webhook-subscriptions`, {
        body: "{}",
        headers: { ...json, "x-platform-api-key": webhooksReader },
      }),
      "insufficient-scope",
      {
        requiredScope: "webhooks:write",
      },
    );
  });

  it("answers write-scope-required to an organization write with a read-only token", async () => {
    const reader = gw.identity.addToken({ orgId: ORG, scopes: ["organizations:read"] });
    const url = `${API}/organizations/${ORG}`;
    expectProblem(
      await send("PATCH", url, { body: "{}", headers: { ...json, "x-platform-api-key": reader } }),
      "write-scope-required",
      { requiredScope: "organizations:write" },
    );
    const nothing = gw.identity.addToken({ orgId: ORG, scopes: ["deals:read"] });
    expectProblem(
      await send("PATCH", url, { body: "{}", headers: { ...json, "x-platform-api-key": nothing } }),
      "insufficient-scope",
      { requiredScope: "organizations:write" },
    );
  });
});
