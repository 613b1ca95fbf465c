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
