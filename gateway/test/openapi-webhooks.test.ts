import { WEBHOOK_EVENT_CATALOG } from "@platform/contracts/webhooks";
import { describe, expect, it } from "vitest";
import { API } from "./harness.js";
import { doc, op, response, serveOpenApiDocument, type WebhookOperation } from "./openapi-document.js";

serveOpenApiDocument();

describe("OpenAPI document: webhooks", () => {
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
});
