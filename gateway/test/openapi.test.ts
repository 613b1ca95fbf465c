import { WEBHOOK_EVENT_CATALOG } from "@platform/contracts/webhooks";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API, buildTestGateway, type TestGateway } from "./harness.js";

/** Every endpoint the specification lists (its Endpoints section), written down independently of the routes. */
const SPEC_ENDPOINTS = [
  "GET /organizations/me",
  "GET /organizations/me/entitlements",
  "GET /organizations/{orgId}",
  "PATCH /organizations/{orgId}",
  "GET /partner/managed-organizations",
  "GET /users",
  "POST /users",
  "GET /users/{userId}",
  "PATCH /users/{userId}",
  "GET /smart-schedules",
  "GET /smart-schedules/{scheduleId}",
  "POST /smart-schedules/{scheduleId}/availability",
  "POST /scheduled-meetings",
  "GET /scheduled-meetings/{meetingId}",
  "PATCH /scheduled-meetings/{meetingId}",
  "DELETE /scheduled-meetings/{meetingId}",
  "GET /scheduled-meetings/{meetingId}/transcript",
  "GET /scheduled-meetings/{meetingId}/transcript/chunks",
  "GET /scheduled-meetings/{meetingId}/chat",
  "GET /scheduled-meetings/{meetingId}/bot",
  "GET /deals",
  "GET /deals/by-source",
  "GET /deals/{dealId}",
  "POST /deals",
  "PATCH /deals/{dealId}",
  "GET /deals/{dealId}/meetings",
  "GET /accounts/{accountId}/deals",
  "GET /deals/{dealId}/qnas",
  "GET /deals/{dealId}/qnas/meetings/{meetingId}",
  "GET /qnas/{qnaId}",
  "POST /deals/{dealId}/qnas",
  "POST /qnas/{qnaId}/answer",
  "POST /qnas/{qnaId}/transitions/{targetState}",
  "GET /deals/{dealId}/insights",
  "GET /deals/{dealId}/insights/{schemaType}",
  "GET /insights/{insightId}",
  "POST /deals/{dealId}/insights/{schemaType}",
  "POST /deals/{dealId}/insights/{schemaType}/fields/{fieldKey}",
  "GET /accounts",
  "GET /accounts/{accountId}",
  "GET /accounts/{accountId}/related",
  "GET /accounts/{accountId}/activity",
  "GET /accounts/{accountId}/contacts",
  "GET /contacts",
  "GET /contacts/{contactId}",
  "GET /contacts/{contactId}/activity",
  "GET /buyer-signals/summary",
  "GET /buyer-signals/activity",
  "GET /buyer-signals/sent-emails",
  "GET /buyer-signals/sent-emails/{sentEmailId}",
  "GET /buyer-signals/sent-emails/{sentEmailId}/signals",
  "GET /email-blasts/summary",
  "GET /email-blasts/top",
  "GET /email-blasts",
  "GET /email-blasts/{blastId}",
  "GET /email-blasts/{blastId}/activity",
  "GET /email-blasts/{blastId}/recipients",
  "GET /webhook-subscriptions",
  "POST /webhook-subscriptions",
];

interface Operation {
  operationId: string;
  description?: string;
  parameters?: unknown[];
  responses: Record<
    string,
    { description: string; headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> }
  >;
}
interface Document {
  openapi: string;
  info: unknown;
  security: unknown;
  components: {
    securitySchemes: Record<string, unknown>;
    schemas: Record<string, { properties: Record<string, { type: unknown }> }>;
  };
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, { post: Omit<Operation, "parameters"> & WebhookOperation }>;
}
interface WebhookOperation {
  security: unknown[];
  parameters: { name: string; in: string; required: boolean }[];
  requestBody: { required: boolean; content: Record<string, { schema: { oneOf: { allOf: unknown[] }[] } }> };
}

/** Every value of `$ref` in a JSON document. */
function refsOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(refsOf);
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([k, v]) => (k === "$ref" && typeof v === "string" ? [v] : refsOf(v)));
}

let gw: TestGateway;
let doc: Document;
beforeAll(async () => {
  gw = await buildTestGateway();
  const res = await gw.app.inject({ method: "GET", url: `${API}/openapi.json` });
  expect(res.statusCode).toBe(200);
  expect(res.headers["content-type"]).toMatch(/^application\/json/);
  doc = res.json() as Document;
});
afterAll(async () => {
  await gw.app.close();
});

function op(path: string, method: string): Operation {
  const found = doc.paths[path]?.[method];
  if (!found) throw new Error(`${method} ${path} is not documented`);
  return found;
}
const response = (o: Operation, status: string) => o.responses[status]!;

const operations = () =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op })),
  );

describe("OpenAPI document", () => {
  it("is OpenAPI 3.1 with the API key scheme applied globally", () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info).toMatchObject({ title: "Platform Integration API", version: "v1alpha1" });
    expect(doc.components.securitySchemes.apiKey).toMatchObject({
      type: "apiKey",
      in: "header",
      name: "X-Platform-Api-Key",
    });
    expect(doc.security).toEqual([{ apiKey: [] }]);
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining([
        "Problem",
        "Organization",
        "Entitlements",
        "User",
        "UserListItem",
        "ManagedOrganization",
      ]),
    );
  });

  it("lists the served routes with their response schemas and headers", () => {
    const me = op(`${API}/organizations/me`, "get");
    expect(me.operationId).toBe("getMyOrganization");
    expect(response(me, "200").content?.["application/json"]?.schema).toEqual({
      $ref: "#/components/schemas/Organization",
    });
    expect(Object.keys(response(me, "200").headers ?? {})).toEqual(
      expect.arrayContaining(["ETag", "RateLimit", "RateLimit-Policy", "X-Request-Id", "Platform-Acting-On"]),
    );
    const byId = op(`${API}/organizations/{orgId}`, "get");
    expect(byId.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ in: "path", name: "orgId", required: true })]),
    );
    expect(response(byId, "404").description).toContain("organization-not-found");
    const entitlements = op(`${API}/organizations/me/entitlements`, "get");
    expect(response(entitlements, "200").headers?.["Cache-Control"]).toBeDefined();
    expect(doc.components.schemas.Organization?.properties.logoUrl?.type).toEqual(["string", "null"]);
  });

  it("names its server, contact, license and a described tag for every operation", () => {
    const full = doc as unknown as {
      servers: { url: string }[];
      info: { contact: { url: string }; license: { name: string; url: string } };
      tags: { name: string; description: string }[];
    };
    // PLATFORM_PUBLIC_URL when set; else where the gateway listens (HOST:PORT).
    expect(full.servers).toEqual([{ url: "http://127.0.0.1:8080", description: expect.any(String) }]);
    expect(full.info.contact.url).toMatch(/^https:\/\//);
    expect(full.info.license).toEqual({ name: expect.any(String), url: expect.stringMatching(/^https:\/\//) });
    const described = new Map(full.tags.map((t) => [t.name, t.description]));
    const used = [
      ...operations().flatMap(({ op }) => (op as { tags?: string[] }).tags ?? []),
      ...Object.values(doc.webhooks).flatMap((w) => (w.post as { tags?: string[] }).tags ?? []),
    ];
    expect(used.length).toBeGreaterThan(0);
    for (const tag of new Set(used)) expect(described.get(tag), tag).toMatch(/\w{3,}/);
  });

  it("documents RateLimit on every answer the rate limiter counted, errors included", () => {
    for (const { path, method, op } of operations()) {
      for (const [status, res] of Object.entries(op.responses)) {
        const names = Object.keys(res.headers ?? {});
        if (status === "401") expect(names, `${method} ${path} ${status}`).not.toContain("RateLimit");
        else
          expect(names, `${method} ${path} ${status}`).toEqual(
            expect.arrayContaining(["RateLimit", "RateLimit-Policy"]),
          );
      }
      expect(response(op, "429").headers).toHaveProperty("Retry-After");
      // Unknown query parameters are 400 invalid-filter on every route.
      expect(response(op, "400").description, `${method} ${path}`).toContain("invalid-filter");
    }
  });

  it("documents ETag, If-None-Match and 304 on single-resource GETs, not on lists", () => {
    const account = op(`${API}/accounts/{accountId}`, "get");
    expect(response(account, "200").headers).toHaveProperty("ETag");
    expect(response(account, "304").headers).toHaveProperty("ETag");
    expect(account.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ in: "header", name: "If-None-Match" })]),
    );
    const accounts = op(`${API}/accounts`, "get");
    expect(accounts.responses["304"]).toBeUndefined();
    expect(response(accounts, "200").headers).not.toHaveProperty("ETag");
  });

  it("documents the user and partner routes with list and detail shapes, If-Match and replays", () => {
    const list = op(`${API}/users`, "get");
    expect(response(list, "200").content?.["application/json"]?.schema).toMatchObject({
      required: ["items", "nextCursor"],
      properties: { items: { items: { $ref: "#/components/schemas/UserListItem" } } },
    });
    expect(response(list, "400").description).toEqual(expect.stringContaining("invalid-filter"));
    expect(list.responses["501"]).toBeUndefined();
    expect(doc.components.schemas.UserListItem?.properties.phoneNumber).toBeUndefined();
    expect(doc.components.schemas.User?.properties.phoneNumber?.type).toEqual(["string", "null"]);

    const invite = op(`${API}/users`, "post");
    expect(response(invite, "201").content?.["application/json"]?.schema).toEqual({
      $ref: "#/components/schemas/User",
    });
    expect(Object.keys(response(invite, "201").headers ?? {})).toEqual(
      expect.arrayContaining(["ETag", "X-Idempotent-Replay"]),
    );

    for (const path of [`${API}/users/{userId}`, `${API}/organizations/{orgId}`]) {
      const update = op(path, "patch");
      expect(update.parameters).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ in: "header", name: "If-Match", required: true }),
          expect.objectContaining({ in: "header", name: "Idempotency-Key", required: true }),
        ]),
      );
      expect(response(update, "412").description).toContain("precondition-failed");
      expect(response(update, "200").headers?.["X-Idempotent-Replay"]).toBeDefined();
    }
    expect(response(op(`${API}/organizations/{orgId}`, "patch"), "403").description).toContain("write-scope-required");

    const managed = op(`${API}/partner/managed-organizations`, "get");
    expect(response(managed, "200").content?.["application/json"]?.schema).toMatchObject({
      properties: { items: { items: { $ref: "#/components/schemas/ManagedOrganization" } } },
    });
  });

  it("documents the scheduling routes: shapes, headers, tiers and the problems with extensions", () => {
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(["SmartScheduleSummary", "SmartSchedule", "AvailableSlot", "Availability", "Meeting"]),
    );
    expect(doc.components.schemas.Problem?.properties).toHaveProperty("rerunAvailability");
    expect(doc.components.schemas.Problem?.properties).toHaveProperty("fieldErrors");
    expect(doc.components.schemas.Meeting?.properties.meetingAi?.type).toBe("null");

    const list = op(`${API}/smart-schedules`, "get");
    expect(response(list, "200").content?.["application/json"]?.schema).toMatchObject({
      properties: { items: { items: { $ref: "#/components/schemas/SmartScheduleSummary" } } },
    });
    expect(response(list, "400").description).toContain("invalid-filter");
    expect(response(op(`${API}/smart-schedules/{scheduleId}`, "get"), "200").content).toEqual({
      "application/json": { schema: { $ref: "#/components/schemas/SmartSchedule" } },
    });

    const search = op(`${API}/smart-schedules/{scheduleId}/availability`, "post");
    expect(search.description).toContain("availability (60 requests per minute");
    expect(search.parameters).not.toEqual(
      expect.arrayContaining([expect.objectContaining({ name: "Idempotency-Key" })]),
    );
    expect(response(search, "422").description).toBe(
      "Problem types: availability-request-invalid, form-validation, schedule-unavailable",
    );
    // A bad body is availability-request-invalid there, never invalid-field.
    expect(response(search, "400").description).not.toContain("invalid-field");

    const bookOp = op(`${API}/scheduled-meetings`, "post");
    expect(response(bookOp, "201").content?.["application/json"]?.schema).toEqual({
      $ref: "#/components/schemas/Meeting",
    });
    expect(response(bookOp, "201").headers?.["X-Idempotent-Replay"]).toBeDefined();
    expect(bookOp.parameters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ in: "header", name: "Idempotency-Key", required: true }),
        expect.objectContaining({ in: "query", name: "utm_campaign", required: false }),
      ]),
    );
    expect(response(bookOp, "409").description).toContain("slot-conflict");
    expect(response(bookOp, "410").description).toContain("slot-token-expired");
    expect(response(bookOp, "422").description).toContain("form-validation");

    const rescheduleOp = op(`${API}/scheduled-meetings/{meetingId}`, "patch");
    expect(response(rescheduleOp, "409").description).toContain("meeting-not-reschedulable");
    expect(response(rescheduleOp, "422").description).toContain("schedule-mismatch");

    const cancelOp = op(`${API}/scheduled-meetings/{meetingId}`, "delete");
    expect(response(cancelOp, "204").content).toBeUndefined();
    expect(response(cancelOp, "204").headers?.RateLimit).toBeDefined();
    expect(response(cancelOp, "410").description).toContain("meeting-completed");
    expect(cancelOp.parameters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ in: "query", name: "sendNotifications" }),
        expect.objectContaining({ in: "query", name: "reason" }),
      ]),
    );
    expect(cancelOp.parameters).not.toEqual(
      expect.arrayContaining([expect.objectContaining({ name: "Idempotency-Key" })]),
    );
  });

  it("serves every endpoint of the spec, none of them a 501 placeholder", () => {
    for (const endpoint of SPEC_ENDPOINTS) {
      const [method, path] = endpoint.split(" ") as [string, string];
      const documented = op(`${API}${path}`, method.toLowerCase());
      expect(documented.operationId, endpoint).toBeDefined();
      expect(documented.responses?.["501"], endpoint).toBeUndefined();
    }
    expect(Object.keys(doc.paths[`${API}/webhook-subscriptions/{subscriptionId}`] ?? {}).sort()).toEqual([
      "delete",
      "get",
      "patch",
    ]);
  });

  it("documents problems, X-Platform-Acting-On and Idempotency-Key on every operation", () => {
    const ops = operations();
    expect(new Set(ops.map((o) => o.op.operationId)).size).toBe(ops.length);
    for (const { op: operation } of ops) {
      for (const status of ["401", "403", "429", "500"]) {
        expect(response(operation, status).content?.["application/problem+json"]?.schema).toEqual({
          $ref: "#/components/schemas/Problem",
        });
      }
      expect(response(operation, "429").headers?.["Retry-After"]).toBeDefined();
      expect(operation.parameters).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ in: "header", name: "X-Platform-Acting-On", required: false }),
        ]),
      );
    }
    const createDeal = op(`${API}/deals`, "post");
    expect(createDeal.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ in: "header", name: "Idempotency-Key", required: true })]),
    );
    expect(createDeal.description).toContain("deals:write");
    expect(response(createDeal, "415").description).toContain("unsupported-media-type");
    const listDeals = op(`${API}/deals`, "get");
    expect(listDeals.parameters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ in: "query", name: "limit", schema: expect.objectContaining({ type: "integer" }) }),
      ]),
    );
  });

  it("lists the webhook event catalog as the enum of events, in the subscription and in the requests", () => {
    const schemas = doc.components.schemas as Record<string, unknown>;
    expect(schemas.WebhookEventKind).toMatchObject({ type: "string", enum: [...WEBHOOK_EVENT_CATALOG] });
    const kind = { $ref: "#/components/schemas/WebhookEventKind" };
    expect(doc.components.schemas.WebhookSubscription?.properties.events).toMatchObject({ type: "array", items: kind });
    for (const [path, method] of [
      ["/webhook-subscriptions", "post"],
      ["/webhook-subscriptions/{subscriptionId}", "patch"],
    ] as const) {
      const body = (op(`${API}${path}`, method) as unknown as WebhookOperation).requestBody;
      const schema = body.content["application/json"]?.schema as unknown as { properties: { events: unknown } };
      const events = schema.properties.events;
      expect(events, `${method} ${path}`).toMatchObject({ type: "array", items: kind, minItems: 1 });
      // An unknown kind is still the service's 422 webhook-events-invalid, not a schema 400.
      expect(response(op(`${API}${path}`, method), "422").description).toContain("webhook-events-invalid");
    }
  });

  it("documents what the webhooks POST: one OpenAPI 3.1 webhook per event kind, both envelopes, headers and rules", () => {
    expect(Object.keys(doc.webhooks)).toEqual([...WEBHOOK_EVENT_CATALOG, "webhook.test"]);
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(["WebhookEventV2", "WebhookEventLegacy", "WebhookLegacyMeeting"]),
    );
    for (const [kind, item] of Object.entries(doc.webhooks)) {
      const hook = item.post;
      expect(hook.operationId, kind).toMatch(/^webhook[A-Z]/);
      // Receivers authenticate the signature; the API key scheme does not apply.
      expect(hook.security).toEqual([]);
      expect(hook.parameters.map((p) => [p.name, p.in, p.required])).toEqual([
        ["webhook-id", "header", true],
        ["webhook-timestamp", "header", true],
        ["webhook-signature", "header", true],
      ]);
      const versions = hook.requestBody.content["application/json"]?.schema.oneOf ?? [];
      expect(versions.map((v) => v.allOf[0])).toEqual([
        { $ref: "#/components/schemas/WebhookEventV2" },
        { $ref: "#/components/schemas/WebhookEventLegacy" },
      ]);
      for (const rule of [
        "5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h",
        "jitter",
        "Retry-After",
        "2xx answered within 15 s",
      ]) {
        expect(hook.description, kind).toContain(rule);
      }
      expect(hook.description).toMatch(/410 Gone disables the subscription/);
      expect(hook.description).toMatch(/failed continuously for 5 days/);
      expect(Object.keys(hook.responses).sort()).toEqual(["2XX", "410", "default"]);
    }
    const rescheduled = doc.webhooks["scheduling.smartscheduler.rescheduled"]?.post.requestBody.content[
      "application/json"
    ]?.schema.oneOf.map((v) => v.allOf[1]);
    expect(rescheduled).toEqual([
      expect.objectContaining({
        properties: expect.objectContaining({
          data: expect.objectContaining({
            required: ["meeting", "reason"],
            properties: { meeting: { $ref: "#/components/schemas/Meeting" }, reason: expect.any(Object) },
          }),
        }),
      }),
      expect.objectContaining({
        properties: expect.objectContaining({
          payload: expect.objectContaining({
            properties: { meeting: { $ref: "#/components/schemas/WebhookLegacyMeeting" }, reason: expect.any(Object) },
          }),
        }),
      }),
    ]);
  });

  it("resolves every $ref, and its schemas compile as JSON Schema 2020-12 (the dialect of OpenAPI 3.1)", () => {
    const schemas = doc.components.schemas as Record<string, unknown>;
    for (const target of new Set(refsOf(doc))) {
      expect(target).toMatch(/^#\/components\/schemas\//);
      expect(schemas[target.slice("#/components/schemas/".length)], target).toBeDefined();
    }
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const id = "https://openapi.test/document";
    ajv.addSchema({ $id: id, components: doc.components, webhooks: doc.webhooks }, undefined, undefined, false);
    for (const name of Object.keys(schemas))
      expect(ajv.getSchema(`${id}#/components/schemas/${name}`), name).toBeDefined();
    for (const kind of Object.keys(doc.webhooks)) {
      const pointer = `/webhooks/${kind}/post/requestBody/content/application~1json/schema`;
      expect(ajv.getSchema(`${id}#${pointer}`), kind).toBeDefined();
    }
  });

  it("keeps operational endpoints out of the document", () => {
    expect(Object.keys(doc.paths).every((p) => p.startsWith(API))).toBe(true);
    expect(doc.paths[`${API}/openapi.json`]).toBeUndefined();
  });

  it("serves the human docs page without a key", async () => {
    const res = await gw.app.inject({ method: "GET", url: "/docs/" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/text\/html/);
  });
});
