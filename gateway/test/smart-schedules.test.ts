import { toJson } from "@bufbuild/protobuf";
import { timestampDate, ValueSchema } from "@bufbuild/protobuf/wkt";
import type { GetAvailabilityRequest, ListSmartSchedulesRequest } from "@platform/contracts/scheduling";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ADA,
  API,
  BEN,
  buildTestGateway,
  CHILD_ORG,
  CHILD_SCHEDULE,
  DISABLED_SCHEDULE,
  DRAFT_SCHEDULE,
  expectProblem,
  get,
  ORG,
  PARTNER_ORG,
  PARTNER_SCOPES,
  PLAIN_MEETING,
  SCHEDULE,
  type TestGateway,
  UNPUBLISHED_SCHEDULE,
} from "./harness.js";

let gw: TestGateway;
let key: string;
beforeEach(async () => {
  gw = await buildTestGateway();
  key = gw.identity.addToken({ orgId: ORG, scopes: ["smart-scheduling:read"] });
});
afterEach(async () => {
  await gw.app.close();
});

const SUMMARY_FIELDS = [
  "id",
  "name",
  "description",
  "status",
  "durationMinutes",
  "timeZone",
  "publishedAt",
  "updatedAt",
].sort();
const DETAIL_FIELDS = [...SUMMARY_FIELDS, "bookingWindow", "matchingForm", "surveyQuestions", "assignees"].sort();

const SCHEDULE_SUMMARY = {
  id: SCHEDULE,
  name: "Discovery call",
  description: "A first call with sales",
  status: "active",
  durationMinutes: 30,
  timeZone: "Europe/Berlin",
  publishedAt: "2025-06-01T08:00:00.000Z",
  updatedAt: "2026-01-05T09:00:00.000Z",
};

const SCHEDULE_DETAIL = {
  ...SCHEDULE_SUMMARY,
  bookingWindow: { minAdvanceMinutes: 120, maxAdvanceDays: 14 },
  matchingForm: {
    fields: [
      { key: "region", label: "Region", type: "select", options: ["emea", "amer"], required: true },
      { key: "seats", label: "Seats", type: "number", options: [], required: false },
    ],
  },
  surveyQuestions: [
    {
      key: "what-would-you-like-to-discuss",
      label: "What would you like to discuss?",
      type: "long-text",
      required: false,
    },
  ],
  assignees: [{ host: { userId: ADA, displayName: "Ada Admin" } }, { host: { userId: BEN, displayName: "Ben Baker" } }],
};

const ids = (body: { items: { id: string }[] }) => body.items.map((s) => s.id);

function availability(scheduleId: string, body: unknown, headers: Record<string, string> = {}, apiKey = key) {
  return gw.app.inject({
    method: "POST",
    url: `${API}/smart-schedules/${scheduleId}/availability`,
    headers: { "x-platform-api-key": apiKey, "content-type": "application/json", ...headers },
    payload: JSON.stringify(body),
  });
}

describe("GET /smart-schedules", () => {
  it("lists the org's active schedules as summaries, most recently updated first", async () => {
    const res = await get(gw.app, `${API}/smart-schedules`, key);
    expect(res.statusCode).toBe(200);
    expect(res.headers["ratelimit-policy"]).toBe('"read";q=300;w=60');
    expect(res.headers["x-request-id"]).toMatch(/\S/);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(["items", "nextCursor"]);
    expect(body.nextCursor).toBeNull();
    expect(ids(body)).toEqual([UNPUBLISHED_SCHEDULE, SCHEDULE]);
    expect(body.items[1]).toEqual(SCHEDULE_SUMMARY);
    expect(Object.keys(body.items[1]).sort()).toEqual(SUMMARY_FIELDS);
    // Unpublished: publishedAt is omitted, not null.
    expect(Object.keys(body.items[0]).sort()).toEqual(SUMMARY_FIELDS.filter((f) => f !== "publishedAt"));
    expect(gw.scheduling.lastRequest<ListSmartSchedulesRequest>("listSmartSchedules")).toMatchObject({
      cursor: "",
      limit: 25,
      sort: "-updatedAt",
      name: "",
      status: "active",
    });
  });

  it("includes disabled schedules with status=all, never drafts or another org's", async () => {
    const body = (await get(gw.app, `${API}/smart-schedules?status=all`, key)).json();
    expect(ids(body)).toEqual([DISABLED_SCHEDULE, UNPUBLISHED_SCHEDULE, SCHEDULE]);
    expect(body.items[0]).toMatchObject({ status: "disabled", publishedAt: "2025-03-02T10:00:00.000Z" });
    expect(ids(body)).not.toContain(DRAFT_SCHEDULE);
    expect(ids(body)).not.toContain(CHILD_SCHEDULE);
  });

  it("passes the name filter and sorts on", async () => {
    expect(ids((await get(gw.app, `${API}/smart-schedules?name=DISC`, key)).json())).toEqual([SCHEDULE]);
    expect(gw.scheduling.lastRequest<ListSmartSchedulesRequest>("listSmartSchedules")?.name).toBe("DISC");
    const byCreation = await get(gw.app, `${API}/smart-schedules?sort=-createdAt`, key);
    expect(ids(byCreation.json())).toEqual([UNPUBLISHED_SCHEDULE, SCHEDULE]);
  });

  it("pages with signed cursors bound to the sort", async () => {
    const first = await get(gw.app, `${API}/smart-schedules?sort=name&limit=1`, key);
    expect(ids(first.json())).toEqual([SCHEDULE]);
    const cursor = first.json().nextCursor as string;
    expect(cursor).toEqual(expect.any(String));
    const second = await get(gw.app, `${API}/smart-schedules?sort=name&limit=1&cursor=${cursor}`, key);
    expect(second.json()).toEqual({ items: [expect.objectContaining({ id: UNPUBLISHED_SCHEDULE })], nextCursor: null });
    expectProblem(await get(gw.app, `${API}/smart-schedules?sort=-name&cursor=${cursor}`, key), "invalid-cursor");
  });

  it("answers 400 invalid-sort-field outside updatedAt, createdAt, name", async () => {
    expectProblem(await get(gw.app, `${API}/smart-schedules?sort=durationMinutes`, key), "invalid-sort-field", {
      field: "durationMinutes",
      allowedSortFields: ["updatedAt", "createdAt", "name"],
    });
  });

  it("passes scheduling's 400 invalid-filter on for a bad status", async () => {
    expectProblem(await get(gw.app, `${API}/smart-schedules?status=draft`, key), "invalid-filter", {
      field: "status",
    });
    expectProblem(await get(gw.app, `${API}/smart-schedules?status=all&status=active`, key), "invalid-filter", {
      field: "status",
    });
  });

  it("requires smart-scheduling:read", async () => {
    const writer = gw.identity.addToken({ orgId: ORG, scopes: ["smart-scheduling:write"] });
    expectProblem(await get(gw.app, `${API}/smart-schedules`, writer), "insufficient-scope", {
      requiredScope: "smart-scheduling:read",
    });
  });

  it("lists the child's schedules when delegating with its grant", async () => {
    const partner = gw.identity.addToken({ orgId: PARTNER_ORG, scopes: [...PARTNER_SCOPES, "smart-scheduling:read"] });
    const actingOn = { "x-platform-acting-on": CHILD_ORG };
    expectProblem(await get(gw.app, `${API}/smart-schedules`, partner, actingOn), "delegation-scope-insufficient", {
      requiredScope: "smart-scheduling:read",
    });
    gw.identity.grants.get(`${PARTNER_ORG}|${CHILD_ORG}`)!.scopes.push("smart-scheduling:read");
    gw.app.purge.delegation(PARTNER_ORG, CHILD_ORG);
    const res = await get(gw.app, `${API}/smart-schedules`, partner, actingOn);
    expect(res.statusCode).toBe(200);
    expect(res.headers["platform-acting-on"]).toBe(CHILD_ORG);
    expect(ids(res.json())).toEqual([CHILD_SCHEDULE]);
  });
});

describe("GET /smart-schedules/{scheduleId}", () => {
  it("returns the detail view: the summary plus booking window, form, survey and assignees", async () => {
    const res = await get(gw.app, `${API}/smart-schedules/${SCHEDULE}`, key);
    expect(res.statusCode).toBe(200);
    expect(res.headers["ratelimit-policy"]).toBe('"read";q=300;w=60');
    expect(Object.keys(res.json()).sort()).toEqual(DETAIL_FIELDS);
    expect(res.json()).toEqual(SCHEDULE_DETAIL);
  });

  it("omits publishedAt of an unpublished schedule", async () => {
    const body = (await get(gw.app, `${API}/smart-schedules/${UNPUBLISHED_SCHEDULE}`, key)).json();
    expect(Object.keys(body).sort()).toEqual(DETAIL_FIELDS.filter((f) => f !== "publishedAt"));
    expect(body).toMatchObject({ matchingForm: { fields: [] }, surveyQuestions: [] });
  });

  it("answers 404 schedule-not-found for a draft or another org's schedule", async () => {
    expectProblem(await get(gw.app, `${API}/smart-schedules/${DRAFT_SCHEDULE}`, key), "schedule-not-found");
    expectProblem(await get(gw.app, `${API}/smart-schedules/${CHILD_SCHEDULE}`, key), "schedule-not-found");
  });

  it("answers 400 invalid-resource-id for an id that is not a sched_ id", async () => {
    const calls = gw.scheduling.received.length;
    for (const id of [PLAIN_MEETING, "sched_short", "discovery"]) {
      expectProblem(await get(gw.app, `${API}/smart-schedules/${id}`, key), "invalid-resource-id");
    }
    expect(gw.scheduling.received.length).toBe(calls);
  });
});

describe("POST /smart-schedules/{scheduleId}/availability", () => {
  it("returns host groups by priority with their slots, and matchedAt", async () => {
    const res = await availability(SCHEDULE, { formValues: { region: "emea" } });
    expect(res.statusCode).toBe(200);
    expect(res.headers["ratelimit-policy"]).toBe('"availability";q=60;w=60');
    expect(res.headers.ratelimit).toBe('"availability";r=59;t=60');
    const slot = (start: string, end: string) => ({ startTime: start, endTime: end, slotToken: expect.any(String) });
    const slots = [
      slot("2026-01-16T09:00:00.000Z", "2026-01-16T09:30:00.000Z"),
      slot("2026-01-16T10:00:00.000Z", "2026-01-16T10:30:00.000Z"),
    ];
    expect(res.json()).toEqual({
      hostGroups: [
        [{ host: { userId: ADA, displayName: "Ada Admin" }, slots }],
        [{ host: { userId: BEN, displayName: "Ben Baker" }, slots }],
      ],
      matchedAt: "2026-01-15T12:00:00.000Z",
    });
    const req = gw.scheduling.lastRequest<GetAvailabilityRequest>("getAvailability")!;
    expect(req).toMatchObject({ scheduleId: SCHEDULE, timeZone: "", preview: false });
    expect(req.rangeStart).toBeUndefined();
    expect(req.rangeEnd).toBeUndefined();
    expect(req.durationMinutes).toBeUndefined();
  });

  it("passes form values as protobuf Values, the date range as timestamps, duration, zone and preview", async () => {
    const res = await availability(SCHEDULE, {
      formValues: { region: "emea", seats: 40, products: ["crm", "voice"], existingCustomer: true },
      dateRange: { start: "2026-01-19T08:00:00+01:00", end: "2026-01-20T23:59:59.5Z" },
      durationMinutes: 45,
      timeZone: "Europe/London",
      preview: true,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().hostGroups[0][0].slots[0]).toMatchObject({
      startTime: "2026-01-19T07:00:00.000Z",
      endTime: "2026-01-19T07:45:00.000Z",
    });
    const req = gw.scheduling.lastRequest<GetAvailabilityRequest>("getAvailability")!;
    expect(Object.fromEntries(Object.entries(req.formValues).map(([k, v]) => [k, toJson(ValueSchema, v)]))).toEqual({
      region: "emea",
      seats: 40,
      products: ["crm", "voice"],
      existingCustomer: true,
    });
    expect(timestampDate(req.rangeStart!).toISOString()).toBe("2026-01-19T07:00:00.000Z");
    expect(timestampDate(req.rangeEnd!).toISOString()).toBe("2026-01-20T23:59:59.500Z");
    expect(req).toMatchObject({ durationMinutes: 45, timeZone: "Europe/London", preview: true });
  });

  it("takes no Idempotency-Key and passes none on", async () => {
    const res = await availability(SCHEDULE, { formValues: { region: "emea" } }, { "idempotency-key": "avail-1" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["x-idempotent-replay"]).toBeUndefined();
    expect(gw.scheduling.contexts.at(-1)?.idempotencyKey).toBeUndefined();
  });

  it.each([
    ["no formValues", {}, "formValues"],
    ["formValues not an object", { formValues: ["emea"] }, "formValues"],
    ["an object answer", { formValues: { region: { code: "emea" } } }, "formValues.region"],
    ["a null answer", { formValues: { region: null } }, "formValues.region"],
    ["a list of numbers", { formValues: { seats: [1, 2] } }, "formValues.seats.0"],
    ["durationMinutes as text", { formValues: {}, durationMinutes: "30" }, "durationMinutes"],
    ["durationMinutes 0", { formValues: {}, durationMinutes: 0 }, "durationMinutes"],
    ["a fractional durationMinutes", { formValues: {}, durationMinutes: 30.5 }, "durationMinutes"],
    ["a dateRange without end", { formValues: {}, dateRange: { start: "2026-01-19T08:00:00Z" } }, "dateRange.end"],
    [
      "a dateRange start that is no date-time",
      { formValues: {}, dateRange: { start: "tomorrow", end: "2026-01-20T08:00:00Z" } },
      "dateRange.start",
    ],
    [
      "a dateRange start without a time",
      { formValues: {}, dateRange: { start: "2026-01-19", end: "2026-01-20T08:00:00Z" } },
      "dateRange.start",
    ],
    [
      "a dateRange end without a zone",
      { formValues: {}, dateRange: { start: "2026-01-19T08:00:00Z", end: "2026-01-20T08:00:00" } },
      "dateRange.end",
    ],
    [
      "a dateRange end that does not exist",
      { formValues: {}, dateRange: { start: "2026-01-19T08:00:00Z", end: "2026-02-30T08:00:00Z" } },
      "dateRange.end",
    ],
    ["preview as text", { formValues: {}, preview: "yes" }, "preview"],
    ["timeZone as a number", { formValues: {}, timeZone: 1 }, "timeZone"],
    ["an unknown field", { formValues: {}, hostId: ADA }, "hostId"],
  ])("answers 422 availability-request-invalid for %s", async (_, body, field) => {
    const calls = gw.scheduling.received.length;
    const problemBody = expectProblem(await availability(SCHEDULE, body), "availability-request-invalid", { field });
    expect(problemBody.detail).toContain(field);
    expect(gw.scheduling.received.length).toBe(calls);
  });

  it("passes scheduling's judgement on: unsupported duration, form-validation with fieldErrors, disabled, unknown", async () => {
    expectProblem(
      await availability(SCHEDULE, { formValues: { region: "emea" }, durationMinutes: 60 }),
      "availability-request-invalid",
      { field: "durationMinutes" },
    );
    const form = expectProblem(await availability(SCHEDULE, { formValues: { region: "apac" } }), "form-validation");
    expect(form.fieldErrors).toEqual([{ field: "formValues.region", message: "One of emea, amer." }]);
    const missing = expectProblem(await availability(SCHEDULE, { formValues: {} }), "form-validation");
    expect(missing.fieldErrors).toEqual([{ field: "formValues.region", message: "Required." }]);
    expectProblem(await availability(DISABLED_SCHEDULE, { formValues: {} }), "schedule-unavailable");
    expectProblem(await availability(CHILD_SCHEDULE, { formValues: {} }), "schedule-not-found");
    expectProblem(await availability(PLAIN_MEETING, { formValues: {} }), "invalid-resource-id");
  });

  it("requires smart-scheduling:read", async () => {
    const writer = gw.identity.addToken({ orgId: ORG, scopes: ["smart-scheduling:write"] });
    expectProblem(await availability(SCHEDULE, { formValues: { region: "emea" } }, {}, writer), "insufficient-scope", {
      requiredScope: "smart-scheduling:read",
    });
  });

  it("allows 60 searches a minute in a bucket of their own, then 429 with Retry-After while reads pass", async () => {
    const body = { formValues: { region: "emea" } };
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await availability(SCHEDULE, body)).statusCode);
    expect(statuses).toEqual(Array(60).fill(200));

    const refused = await availability(SCHEDULE, body);
    expectProblem(refused, "rate-limit-exceeded");
    expect(refused.headers["retry-after"]).toBe("60");
    expect(refused.headers["ratelimit-policy"]).toBe('"availability";q=60;w=60');
    expect(refused.headers.ratelimit).toBe('"availability";r=0;t=60');

    const read = await get(gw.app, `${API}/smart-schedules/${SCHEDULE}`, key);
    expect(read.statusCode).toBe(200);
    expect(read.headers.ratelimit).toBe('"read";r=299;t=60');

    gw.clock.advance(60_001);
    expect((await availability(SCHEDULE, body)).statusCode).toBe(200);
  });
});
