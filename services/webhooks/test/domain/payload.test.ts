import { create, toJson } from "@bufbuild/protobuf";
import { MeetingBookedSchema, MeetingCanceledSchema } from "@platform/contracts/events/scheduling";
import { meetingJson } from "@platform/contracts/rest/meeting";
import { EVENT_TYPES } from "@platform/kit/events";
import { describe, expect, it } from "vitest";
import { DELIVERED_TOPICS } from "../../src/delivery/fan-out.js";
import { checkEvents, EVENT_CATALOG, MEETING_EVENT_TYPES } from "../../src/domain/catalog.js";
import { audienceOf, renderPayload } from "../../src/domain/payload.js";
import { meeting } from "../builders.js";

const m = meeting("org_aaaaaaaaaaaaaaaaaaaaaaaa");
const booked = toJson(MeetingBookedSchema, create(MeetingBookedSchema, { meeting: m }));
const canceled = toJson(MeetingCanceledSchema, create(MeetingCanceledSchema, { meeting: m, reason: "Conflict" }));
const occurredAt = new Date("2026-01-15T12:00:00Z");

describe("payloads", () => {
  it("v2 carries exactly the REST Meeting, and the reason of cancellations", () => {
    const v2 = JSON.parse(renderPayload({ id: "e1", type: EVENT_TYPES.meetingBooked, data: booked, occurredAt }, "v2"));
    expect(v2).toEqual({
      id: "e1",
      type: "scheduling.smartscheduler.booked",
      timestamp: "2026-01-15T12:00:00.000Z",
      data: { meeting: meetingJson(m) },
    });
    expect(v2.data.meeting.smartScheduling.formValues).toEqual([{ key: "region", answer: "EMEA" }]);
    const c = JSON.parse(
      renderPayload({ id: "e2", type: EVENT_TYPES.meetingCanceled, data: canceled, occurredAt }, "v2"),
    );
    expect(c.data.reason).toBe("Conflict");
  });

  it("legacy keeps the nested shape", () => {
    const legacy = JSON.parse(
      renderPayload({ id: "e3", type: EVENT_TYPES.meetingCanceled, data: canceled, occurredAt }, "legacy"),
    );
    expect(legacy).toMatchObject({
      event: "scheduling.smartscheduler.canceled",
      event_id: "e3",
      created_at: "2026-01-15T12:00:00.000Z",
      payload: {
        meeting: {
          id: m.id,
          start: "2026-01-20T15:00:00.000Z",
          host: { email: "host@acme.example", name: "Hal Host" },
          invitee: { email: "ada@example.com", name: "Ada Lovelace", phone: "+14155550123" },
          questions_and_answers: [{ question: "region", answer: "EMEA" }],
        },
        reason: "Conflict",
      },
    });
  });

  it("other contexts' data is passed through as published", () => {
    const data = { orgId: "org_x", deal: { id: "deal_1" } };
    const v2 = JSON.parse(renderPayload({ id: "e4", type: EVENT_TYPES.dealCreated, data, occurredAt }, "v2"));
    expect(v2.data).toEqual(data);
  });

  it("previews and the sandbox's events reach nobody; others reach the meeting's org", () => {
    expect(audienceOf(EVENT_TYPES.meetingBooked, booked, "")).toEqual({ deliver: true, orgId: m.orgId });
    const preview = meeting(m.orgId, { preview: true });
    const previewData = toJson(MeetingBookedSchema, create(MeetingBookedSchema, { meeting: preview }));
    expect(audienceOf(EVENT_TYPES.meetingBooked, previewData, "").deliver).toBe(false);
    const sandboxData = toJson(MeetingBookedSchema, create(MeetingBookedSchema, { meeting: m, sandbox: true }));
    expect(audienceOf(EVENT_TYPES.meetingBooked, sandboxData, "").deliver).toBe(false);
    expect(audienceOf(EVENT_TYPES.dealCreated, { deal: {} }, "org_key")).toEqual({ deliver: true, orgId: "org_key" });
    expect(audienceOf(EVENT_TYPES.dealCreated, { orgId: "org_d", sandbox: true }, "org_d").deliver).toBe(false);
  });
});

describe("checkEvents", () => {
  it("requires a non-empty list of catalog kinds and collapses duplicates", () => {
    expect(checkEvents([]).ok).toBe(false);
    expect(checkEvents(["scheduling.smartscheduler.booked", "nope"])).toEqual({
      ok: false,
      reason: "Not in the event catalog: nope.",
    });
    expect(checkEvents(["webhook.test"]).ok).toBe(false);
    expect(checkEvents(["revenue.deal.created", "revenue.deal.created"])).toEqual({
      ok: true,
      events: ["revenue.deal.created"],
    });
  });
});

describe("the catalog", () => {
  it("names exactly event types the producers publish (the contracts' list and EVENT_TYPES stay in step)", () => {
    const published: readonly string[] = Object.values(EVENT_TYPES);
    for (const kind of EVENT_CATALOG) expect(published).toContain(kind);
    for (const kind of MEETING_EVENT_TYPES) expect(EVENT_CATALOG).toContain(kind);
  });

  it("comes from the topics the fan-out consumes: scheduling and revenue", () => {
    // Every catalog kind is named after its context, whose topic is platform.<context>.v1.
    const contexts = new Set(EVENT_CATALOG.map((kind) => kind.split(".")[0]));
    expect([...contexts].map((c) => `platform.${c}.v1`).sort()).toEqual([...DELIVERED_TOPICS].sort());
  });
});
