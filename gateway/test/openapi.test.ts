import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { API } from "./harness.js";
import { doc, gw, op, operations, response, serveOpenApiDocument } from "./openapi-document.js";

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

/** Every value of `$ref` in a JSON document. */
function refsOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(refsOf);
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([k, v]) => (k === "$ref" && typeof v === "string" ? [v] : refsOf(v)));
}

serveOpenApiDocument();

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
