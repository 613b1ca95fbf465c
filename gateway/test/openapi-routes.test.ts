import { describe, expect, it } from "vitest";
import { API } from "./harness.js";
import { doc, op, response, serveOpenApiDocument } from "./openapi-document.js";

serveOpenApiDocument();

describe("OpenAPI document: identity and scheduling routes", () => {
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
});
