import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { gatewayConfigSpec } from "@platform/gateway/config";
import { ManualClock } from "@platform/kit/clock";
import { loadConfig } from "@platform/kit/config";
import { TOPICS } from "@platform/kit/events";
import { newId } from "@platform/kit/ids";
import type { InProcessBus } from "@platform/kit/in-process-bus";
import { createLogger } from "@platform/kit/logger";
import { toBusMessage } from "@platform/kit/outbox";
import { eventually } from "@platform/kit/testing";
import { sandboxOrgId } from "@platform/sandbox";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createEmbeddedPlatform, type EmbeddedPlatform } from "../src/platform.js";

// The event log and its live stream through the gateway on the embedded platform: bookings
// through the API → scheduling's outbox → in-process bus → the webhooks fan-out → the log →
// GET /events and GET /events/stream (a real port: SSE is a long response).
const DOCS = "https://docs.events-test.example";
const API = "/api/v1alpha1";
const SEED = "events-api-test";
const clock = new ManualClock(new Date("2026-03-02T10:00:00Z"));
const BOOKED = "scheduling.smartscheduler.booked";
const CANCELED = "scheduling.smartscheduler.canceled";
const MAX_STREAMS = 2;

let platform: EmbeddedPlatform;
let base: string;
const keys: Record<string, string> = {};
let n = 0;

type Init = { headers?: Record<string, string>; body?: unknown; apiKey?: string };
function call(method: "GET" | "POST" | "PATCH" | "DELETE", url: string, init: Init = {}) {
  return platform.app.inject({
    method,
    url: `${API}${url}`,
    headers: {
      "x-platform-api-key": init.apiKey ?? keys["acme-full"]!,
      ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
      ...(method === "POST" || method === "PATCH" ? { "idempotency-key": `ev-${++n}` } : {}),
      ...init.headers,
    },
    ...(init.body !== undefined ? { payload: JSON.stringify(init.body) } : {}),
  });
}
const problemType = (name: string) => `${DOCS}/platform-api/errors/${name}`;

/** An event as GET /events lists it. */
interface LoggedEvent {
  id: string;
  type: string;
  timestamp: string;
  data: { meeting?: { id: string }; orgId?: string };
}

interface Slot {
  slotToken: string;
  startTime: string;
  endTime: string;
}

/** Books the intro schedule's first free slot (a preview slot token when `preview`); the meeting. */
async function book(preview = false): Promise<{ id: string }> {
  const list = (await call("GET", "/smart-schedules?name=intro")).json();
  const id = list.items[0].id as string;
  const detail = (await call("GET", `/smart-schedules/${id}`)).json();
  const region = detail.matchingForm.fields.find((f: { key: string }) => f.key === "region");
  const formValues = { region: region.options[0] };
  const avail = await call("POST", `/smart-schedules/${id}/availability`, { body: { formValues, preview } });
  expect(avail.statusCode, avail.body).toBe(200);
  const slots: Slot[] = avail.json().hostGroups.flatMap((g: { slots: Slot[] }[]) => g.flatMap((h) => h.slots));
  const booked = await call("POST", "/scheduled-meetings", {
    body: {
      slotToken: slots[0]!.slotToken,
      attendee: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com" },
      formValues,
      surveyResponses: { "What would you like to discuss?": "Events" },
    },
  });
  expect(booked.statusCode, booked.body).toBe(201);
  return booked.json();
}

/** Books and cancels a meeting; resolves once both events are in acme's log. */
async function bookAndCancel(): Promise<{ booked: string; canceled: string }> {
  const meeting = await book();
  expect((await call("DELETE", `/scheduled-meetings/${meeting.id}?sendNotifications=false`)).statusCode).toBe(204);
  return eventually(
    "the booking and its cancellation in the log",
    async () => {
      const of = await logged(meeting.id);
      const booked = of.find((e) => e.type === BOOKED);
      const canceled = of.find((e) => e.type === CANCELED);
      return booked && canceled ? { booked: booked.id, canceled: canceled.id } : undefined;
    },
    30_000,
  );
}

/**
 * The log's entries about a meeting, read from the webhooks schema: waiting through the API
 * would spend the read limit, which the manual clock never refills within a test.
 */
async function logged(meetingId: string): Promise<{ id: string; type: string }[]> {
  return platform.dbs.webhooks!.query<{ id: string; type: string }>(
    "SELECT id, type FROM webhooks.event_log WHERE payload::jsonb -> 'data' -> 'meeting' ->> 'id' = $1",
    [meetingId],
  );
}

/** An open GET /events/stream: the messages and comments received so far. */
interface OpenStream {
  status: number;
  headers: Headers;
  messages: EventSourceMessage[];
  comments: string[];
  body: string;
  close(): void;
}

/** Every stream a test opened, closed after it (a failed test would leave its own open). */
const opened: OpenStream[] = [];

async function openStream(apiKey: string, headers: Record<string, string> = {}, query = ""): Promise<OpenStream> {
  const controller = new AbortController();
  const res = await fetch(`${base}${API}/events/stream${query}`, {
    headers: { "x-platform-api-key": apiKey, accept: "text/event-stream", ...headers },
    signal: controller.signal,
  });
  const stream: OpenStream = {
    status: res.status,
    headers: res.headers,
    messages: [],
    comments: [],
    body: "",
    close: () => controller.abort(),
  };
  opened.push(stream);
  if (res.status !== 200) {
    stream.body = await res.text();
    return stream;
  }
  const parser = createParser({
    onEvent: (e) => stream.messages.push(e),
    onComment: (c) => stream.comments.push(c),
  });
  const decoder = new TextDecoder();
  void (async () => {
    try {
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk));
    } catch {
      // aborted by close()
    }
  })();
  return stream;
}

beforeAll(async () => {
  platform = await createEmbeddedPlatform({
    clock,
    logger: createLogger("events-api-test", "silent"),
    gateway: loadConfig(gatewayConfigSpec, {
      PLATFORM_DOCS_URL: DOCS,
      LOG_LEVEL: "silent",
      EVENTS_STREAM_POLL_MS: "20",
      EVENTS_STREAM_HEARTBEAT_MS: "200",
      EVENTS_STREAM_MAX_PER_TOKEN: String(MAX_STREAMS),
    }),
    sandboxSeed: SEED,
    seedSandbox: true,
    adminSecret: "events-api-test-admin",
    env: { WEBHOOKS_POLL_MS: "20" },
  });
  for (const k of await platform.sandboxKeys()) keys[k.name] = k.key;
  await platform.app.listen({ port: 0, host: "127.0.0.1" });
  const address = platform.app.server.address();
  if (!address || typeof address === "string") throw new Error("gateway not listening");
  base = `http://127.0.0.1:${address.port}`;
  // Starting every service on PGlite takes long on a loaded machine.
}, 180_000);
afterAll(async () => {
  // fetch (undici) may leave a connection open that never sends a request once a stream was
  // aborted; the server would wait for its headers timeout before closing.
  platform.app.server.closeAllConnections();
  await platform.close();
}, 120_000);
// A fresh minute of the read bucket per test.
beforeEach(() => clock.advance(61_000));
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});

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

describe("npx platform trigger", { timeout: 90_000 }, () => {
  it("causes real events through the public API, each in the log, and frees the slot again", async () => {
    // The CLI as an integrator runs it: its own process, talking to this platform over HTTP.
    const { code, stdout, stderr } = await runCli([
      "trigger",
      "scheduling.smartscheduler.rescheduled",
      "--api-url",
      base,
      "--api-key",
      keys["acme-full"]!,
      "--json",
    ]);
    expect(code, stderr).toBe(0);
    const steps = JSON.parse(stdout) as { action: string; id: string; emits: string }[];
    expect(steps.map((s) => s.emits)).toEqual([BOOKED, "scheduling.smartscheduler.rescheduled", CANCELED]);
    const meetingId = steps[0]!.id;
    expect(meetingId).toMatch(/^mtg_/);
    await eventually(
      "the three events in the log",
      async () => ((await logged(meetingId)).length === 3 ? true : undefined),
      30_000,
    );
    expect((await call("GET", `/scheduled-meetings/${meetingId}`)).json().status).toBe("canceled");
  });
});

describe("npx platform trigger, revenue kinds", { timeout: 120_000 }, () => {
  /** Runs `trigger <kind> --json` with acme's full key; the steps it printed. */
  async function triggered(kind: string): Promise<{ action: string; id: string; emits: string }[]> {
    const { code, stdout, stderr } = await runCli([
      "trigger",
      kind,
      "--api-url",
      base,
      "--api-key",
      keys["acme-full"]!,
      "--json",
    ]);
    expect(code, stderr).toBe(0);
    return JSON.parse(stdout);
  }
  /** Waits for an event of `type` about `id` in acme's log, then finds it through GET /events. */
  async function inAcmeEvents(type: string, id: string): Promise<void> {
    await eventually(
      `${type} about ${id} in the log`,
      async () => {
        const rows = await platform.dbs.webhooks!.query(
          "SELECT 1 FROM webhooks.event_log WHERE type = $1 AND position($2 in payload::text) > 0",
          [type, id],
        );
        return rows.length > 0 ? true : undefined;
      },
      30_000,
    );
    const res = await call("GET", `/events?type=${type}&limit=100`);
    expect(res.statusCode, res.body).toBe(200);
    const items = res.json().items as LoggedEvent[];
    expect(items.some((e) => JSON.stringify(e.data).includes(id))).toBe(true);
  }

  it("revenue.deal.created creates a deal in the caller's org, named as such, and its event is in GET /events", async () => {
    const steps = await triggered("revenue.deal.created");
    expect(steps.map((s) => s.emits)).toEqual(["revenue.deal.created"]);
    const dealId = steps[0]!.id;
    expect(dealId).toMatch(/^deal_/);
    const deal = (await call("GET", `/deals/${dealId}`)).json();
    expect(deal.name).toBe("Created by platform trigger");
    await inAcmeEvents("revenue.deal.created", dealId);
  });

  it("revenue.deal.updated creates then renames a deal; both events are in GET /events", async () => {
    const steps = await triggered("revenue.deal.updated");
    expect(steps.map((s) => s.emits)).toEqual(["revenue.deal.created", "revenue.deal.updated"]);
    expect((await call("GET", `/deals/${steps[1]!.id}`)).json().name).toBe("Created by platform trigger (updated)");
    await inAcmeEvents("revenue.deal.updated", steps[1]!.id);
  });

  it("revenue.qna.created and revenue.qna.updated create and dismiss a discovery Q&A", async () => {
    const created = await triggered("revenue.qna.created");
    expect(created.map((s) => s.emits)).toEqual([
      "revenue.deal.created",
      "revenue.insight.created",
      "revenue.qna.created",
    ]);
    expect(created[2]!.id).toMatch(/^qna_/);
    await inAcmeEvents("revenue.qna.created", created[2]!.id);
    clock.advance(61_000);
    const updated = await triggered("revenue.qna.updated");
    expect(updated.at(-1)!.emits).toBe("revenue.qna.updated");
    expect((await call("GET", `/qnas/${updated.at(-1)!.id}`)).json().state).toBe("dismissed");
  });

  it("revenue.insight.item-appended creates the Problem record and appends an item; the event is in GET /events", async () => {
    const steps = await triggered("revenue.insight.item-appended");
    expect(steps.map((s) => s.emits)).toEqual([
      "revenue.deal.created",
      "revenue.insight.created",
      "revenue.insight.item-appended",
    ]);
    await inAcmeEvents("revenue.insight.item-appended", steps[2]!.id);
  });

  it("a key lacking deals:write gets one line naming the scope", async () => {
    const { code, stdout, stderr } = await runCli([
      "trigger",
      "revenue.deal.created",
      "--api-url",
      base,
      "--api-key",
      keys["acme-readonly"]!,
    ]);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr.trim().split("\n")).toHaveLength(1);
    expect(stderr).toMatch(/insufficient-scope.*deals:write/);
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

describe("GET /events/stream", { timeout: 90_000 }, () => {
  it("streams new events as SSE with heartbeats, and resumes after Last-Event-ID without gaps or repeats", async () => {
    const reader = keys["acme-readonly"]!;
    const stream = await openStream(reader);
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(stream.headers.get("x-request-id")).toBeTruthy();
    expect(stream.headers.get("ratelimit")).toMatch(/^"read";/);
    const first = await bookAndCancel();
    await eventually(
      `${stream.messages.length} messages so far`,
      () => (stream.messages.length < 2 ? undefined : true),
      10_000,
    );
    expect(stream.messages.map((m) => m.id)).toEqual([first.booked, first.canceled]);
    // The data is the v2 envelope, exactly as GET /events/{id} shows it.
    const logged = await call("GET", `/events/${first.booked}`);
    expect(stream.messages[0]!.data).toBe(logged.body);
    await eventually(
      "no heartbeat yet",
      () => (!stream.comments.some((c) => c.trim().startsWith("heartbeat")) ? undefined : true),
      10_000,
    );
    stream.close();

    // Missed while disconnected: two more events; a reconnect after the last one seen gets exactly them.
    const missed = await bookAndCancel();
    const resumed = await openStream(reader, { "last-event-id": first.canceled });
    await eventually(
      `${resumed.messages.length} messages so far`,
      () => (resumed.messages.length < 2 ? undefined : true),
      10_000,
    );
    const third = await bookAndCancel();
    await eventually(
      `${resumed.messages.length} messages so far`,
      () => (resumed.messages.length < 4 ? undefined : true),
      10_000,
    );
    await new Promise((r) => setTimeout(r, 200));
    expect(resumed.messages.map((m) => m.id)).toEqual([missed.booked, missed.canceled, third.booked, third.canceled]);
    resumed.close();

    // Filtered like the log; an unknown Last-Event-ID is an ordinary 400 problem, not a stream.
    const filtered = await openStream(reader, { "last-event-id": first.canceled }, `?type=${CANCELED}`);
    await eventually(
      `${filtered.messages.length} messages so far`,
      () => (filtered.messages.length < 2 ? undefined : true),
      10_000,
    );
    expect(filtered.messages.map((m) => m.id)).toEqual([missed.canceled, third.canceled]);
    filtered.close();
    const unknown = await openStream(reader, { "last-event-id": newId("evt_") });
    expect(unknown.status).toBe(400);
    expect(JSON.parse(unknown.body).type).toBe(problemType("invalid-cursor"));
    const badType = await openStream(reader, {}, "?type=nope");
    expect(badType.status).toBe(400);
    expect(JSON.parse(badType.body).type).toBe(problemType("invalid-filter"));
  });

  it("counts once per connection against the read limit, and caps the streams a token holds open", async () => {
    const reader = keys["acme-readonly"]!;
    const remaining = async () =>
      Number(/r=(\d+)/.exec(String((await call("GET", "/events?limit=1", { apiKey: reader })).headers.ratelimit))?.[1]);
    const before = await remaining();
    const streams = [await openStream(reader), await openStream(reader)];
    expect(streams.map((s) => s.status)).toEqual([200, 200]);
    await bookAndCancel();
    await eventually("not streamed yet", () => (streams.some((s) => s.messages.length < 2) ? undefined : true), 10_000);
    // Two streams and two events each: two hits, plus this request's own.
    expect(await remaining()).toBe(before - 3);

    const refused = await openStream(reader);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("content-type")).toMatch(/application\/problem\+json/);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(JSON.parse(refused.body)).toMatchObject({ type: problemType("rate-limit-exceeded"), limit: MAX_STREAMS });
    // Another token has its own streams.
    const other = await openStream(keys["acme-full"]!);
    expect(other.status).toBe(200);
    other.close();
    // Closing one frees its place.
    streams[0]!.close();
    const again = await eventually(
      "a place freed by the closed stream",
      async () => {
        const s = await openStream(reader);
        return s.status === 200 ? s : undefined;
      },
      10_000,
      100,
    );
    again.close();
    streams[1]!.close();
  });
});

const CLI = fileURLToPath(new URL("../../cli/bin/platform.js", import.meta.url));

function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? "" } }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** An event as revenue's outbox relay would publish it, straight onto the in-process bus. */
async function publishRevenueEvent(bus: InProcessBus, type: string, orgId: string, data: object): Promise<string> {
  const id = randomUUID();
  const envelope = { id, type, source: "revenue", time: new Date().toISOString(), data: { orgId, ...data } };
  await bus.publish(TOPICS.revenue, [toBusMessage(envelope, orgId)]);
  return id;
}
