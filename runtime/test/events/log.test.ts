import { newId } from "@platform/kit/ids";
import { eventually } from "@platform/kit/testing";
import { sandboxOrgId } from "@platform/sandbox";
import { describe, expect, it } from "vitest";
import { API } from "../support/platform.js";
import {
  BOOKED,
  book,
  bookAndCancel,
  CANCELED,
  call,
  keys,
  type LoggedEvent,
  logged,
  platform,
  problemType,
  publishRevenueEvent,
  SEED,
  useEventsPlatform,
} from "./setup.js";

// GET /events and its OpenAPI document (setup.ts starts the platform).

useEventsPlatform();

// Each test makes many requests (bookings go through availability and the fan-out).
describe("GET /events", { timeout: 90_000 }, () => {
  it("lists the org's events newest first, each the v2 envelope its deliveries carry, and reads one", async () => {
    const { booked, canceled } = await bookAndCancel();
    const page = await call("GET", "/events?limit=1");
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toMatch(/^application\/json/);
    const [first] = page.json().items;
    expect(first).toEqual({ id: canceled, type: CANCELED, timestamp: expect.any(String), data: expect.any(Object) });
    expect(first.data).toMatchObject({ meeting: { status: "canceled" }, reason: null });
    const cursor = page.json().nextCursor as string;
    expect(cursor).toEqual(expect.any(String));
    // The next page continues after the cursor.
    const next = await call("GET", `/events?limit=1&cursor=${encodeURIComponent(cursor)}`);
    const [second] = next.json().items;
    expect(second.id).toBe(booked);
    // The sandbox's seeded events are not in the log: these two are all of it.
    expect(next.json().nextCursor).toBeNull();

    const one = await call("GET", `/events/${booked}`);
    expect(one.statusCode).toBe(200);
    expect(one.json()).toEqual(second);
    expect(one.headers.ratelimit).toMatch(/^"read";r=\d+/);
  });

  it("filters by kind (repeatable) and by time, and refuses bad filters, limits and cursors with the spec's problems", async () => {
    const { booked, canceled } = await bookAndCancel();
    const onlyBooked = (await call("GET", `/events?type=${BOOKED}&limit=100`)).json().items;
    expect(onlyBooked.every((e: { type: string }) => e.type === BOOKED)).toBe(true);
    expect(onlyBooked.map((e: { id: string }) => e.id)).toContain(booked);
    const both = (await call("GET", `/events?type=${BOOKED}&type=${CANCELED}&limit=100`)).json().items;
    expect(both.map((e: { id: string }) => e.id)).toEqual(expect.arrayContaining([booked, canceled]));
    const at = (await call("GET", `/events/${booked}`)).json().timestamp as string;
    const window = (
      await call(
        "GET",
        `/events?createdAfter=${at}&createdBefore=${encodeURIComponent(new Date(Date.parse(at) + 1).toISOString())}`,
      )
    ).json();
    expect(window.items.map((e: { id: string }) => e.id)).toContain(booked);
    const later = (await call("GET", `/events?createdAfter=2099-01-01`)).json();
    expect(later.items).toEqual([]);

    for (const [query, problem, field] of [
      ["type=scheduling.smartscheduler.nope", "invalid-filter", "type"],
      ["createdAfter=yesterday", "invalid-filter", "createdAfter"],
      ["createdBefore=2026-02-30", "invalid-filter", "createdBefore"],
      ["createdAfter=2026-03-02T10:00:00Z&createdBefore=2026-03-01T00:00:00Z", "invalid-filter", "createdAfter"],
      ["limit=abc", "invalid-field", "limit"],
      ["cursor=garbage", "invalid-cursor", undefined],
    ] as const) {
      const res = await call("GET", `/events?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.headers["content-type"]).toMatch(/application\/problem\+json/);
      expect(res.json(), query).toMatchObject({ type: problemType(problem), ...(field ? { field } : {}) });
    }
    // Another org's cursor is not a position in this org's log.
    const umbrellaPage = await call("GET", "/events?limit=1", { apiKey: keys["acme-readonly"] });
    const cursor = umbrellaPage.json().nextCursor as string;
    const cross = await call("GET", `/events?limit=1&cursor=${encodeURIComponent(cursor)}`, {
      apiKey: keys["umbrella-full"],
    });
    expect(cross.json().type).toBe(problemType("invalid-cursor"));
  });

  it("is org-scoped: 404 event-not-found for other orgs' and unknown ids, 400 for malformed ones", async () => {
    const { booked } = await bookAndCancel();
    const other = await call("GET", `/events/${booked}`, { apiKey: keys["umbrella-full"] });
    expect(other.statusCode).toBe(404);
    expect(other.json().type).toBe(problemType("event-not-found"));
    expect((await call("GET", "/events?limit=100", { apiKey: keys["umbrella-full"] })).json().items).toEqual([]);
    const unknown = await call("GET", `/events/${newId("evt_")}`);
    expect(unknown.json()).toMatchObject({ status: 404, type: problemType("event-not-found") });
    for (const id of ["evt_nope", newId("sub_")]) {
      const malformed = await call("GET", `/events/${id}`);
      expect(malformed.statusCode).toBe(400);
      expect(malformed.json().type).toBe(problemType("invalid-resource-id"));
    }
  });

  it("needs webhooks:read: 403 insufficient-scope without it, on the log and the stream", async () => {
    for (const url of ["/events", `/events/${newId("evt_")}`, "/events/stream"]) {
      const res = await call("GET", url, { apiKey: keys["acme-noscopes"] });
      expect(res.statusCode, url).toBe(403);
      expect(res.json()).toMatchObject({ type: problemType("insufficient-scope"), requiredScope: "webhooks:read" });
    }
    expect((await call("GET", "/events", { apiKey: keys["acme-readonly"] })).statusCode).toBe(200);
  });

  it("leaves out preview bookings, as delivery does", async () => {
    const preview = await book(true);
    const real = await book();
    await eventually(
      "the real booking in the log",
      async () => ((await logged(real.id)).length > 0 ? true : undefined),
      30_000,
    );
    const items = (await call("GET", "/events?limit=100")).json().items as LoggedEvent[];
    expect(items.some((e) => e.data.meeting?.id === preview.id)).toBe(false);
  });

  it("follows delegation: a partner reads a child's log when granted webhooks:read, not otherwise", async () => {
    const initech = sandboxOrgId(SEED, "initech");
    const globex = sandboxOrgId(SEED, "globex");
    await publishRevenueEvent(platform.bus, "revenue.deal.created", initech, { deal: { id: "deal_initech" } });
    const partner = keys["northwind-partner"];
    await eventually(
      "initech's event in the log",
      async () => {
        const rows = await platform.dbs.webhooks!.query("SELECT 1 FROM webhooks.event_log WHERE org_id = $1", [
          initech,
        ]);
        return rows.length > 0 ? true : undefined;
      },
      30_000,
    );
    const res = await call("GET", "/events", { apiKey: partner, headers: { "x-platform-acting-on": initech } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers["platform-acting-on"]).toBe(initech);
    const items = res.json().items as LoggedEvent[];
    expect(items[0]).toMatchObject({ type: "revenue.deal.created", data: { orgId: initech } });
    // The partner's own org and acme see none of it; Globex granted no webhooks:read.
    expect((await call("GET", "/events", { apiKey: partner })).json().items).toEqual([]);
    const acme = (await call("GET", "/events?type=revenue.deal.created")).json().items as LoggedEvent[];
    expect(acme.some((e) => e.data.orgId === initech)).toBe(false);
    const globexRes = await call("GET", "/events", { apiKey: partner, headers: { "x-platform-acting-on": globex } });
    expect(globexRes.statusCode).toBe(403);
    expect(globexRes.json().type).toBe(problemType("delegation-scope-insufficient"));
  });
});

describe("the OpenAPI document", () => {
  it("documents the log, one event and the stream (as text/event-stream), with their scope and problems", async () => {
    const doc = (await call("GET", "/openapi.json")).json();
    const list = doc.paths[`${API}/events`].get;
    expect(list.description).toContain("`webhooks:read`");
    expect(list.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(["cursor", "limit", "type", "createdAfter", "createdBefore"]),
    );
    expect(list.responses["400"].description).toMatch(/invalid-filter.*invalid-cursor|invalid-cursor.*invalid-filter/);
    expect(doc.paths[`${API}/events/{eventId}`].get.responses["404"].description).toContain("event-not-found");
    const stream = doc.paths[`${API}/events/stream`].get;
    expect(Object.keys(stream.responses["200"].content)).toEqual(["text/event-stream"]);
    expect(stream.responses["200"].content["text/event-stream"].schema.description).toContain("Last-Event-ID");
    expect(doc.components.schemas.Event.required).toEqual(["id", "type", "timestamp", "data"]);
  });
});
