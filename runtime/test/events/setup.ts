import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { TOPICS } from "@platform/kit/events";
import type { InProcessBus } from "@platform/kit/in-process-bus";
import { toBusMessage } from "@platform/kit/outbox";
import { eventually } from "@platform/kit/testing";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { afterAll, afterEach, beforeAll, beforeEach, expect } from "vitest";
import type { EmbeddedPlatform } from "../../src/platform.js";
import { API, apiTest, CLOSE_TIMEOUT_MS, START_TIMEOUT_MS } from "../support/platform.js";

// The event log and its live stream through the gateway on the embedded platform: bookings
// through the API → scheduling's outbox → in-process bus → the webhooks fan-out → the log →
// GET /events and GET /events/stream (a real port: SSE is a long response). Each test file of
// this folder starts a platform of its own with this setup.
export const SEED = "events-api-test";
export const BOOKED = "scheduling.smartscheduler.booked";
export const CANCELED = "scheduling.smartscheduler.canceled";
export const MAX_STREAMS = 2;
export const t = apiTest({
  name: SEED,
  gatewayEnv: {
    EVENTS_STREAM_POLL_MS: "20",
    EVENTS_STREAM_HEARTBEAT_MS: "200",
    EVENTS_STREAM_MAX_PER_TOKEN: String(MAX_STREAMS),
  },
  platform: { env: { WEBHOOKS_POLL_MS: "20" } },
  // Tokens created and revoked by the tests (revocation ends streams).
  admin: true,
});
export const { call, problemType, keys, clock } = t;
export let platform: EmbeddedPlatform;
/** The gateway's own port (the stream and the CLI need one). */
export let base: string;

/** An event as GET /events lists it. */
export interface LoggedEvent {
  id: string;
  type: string;
  timestamp: string;
  data: { meeting?: { id: string }; orgId?: string };
}

export interface Slot {
  slotToken: string;
  startTime: string;
  endTime: string;
}

/** Books the intro schedule's first free slot (a preview slot token when `preview`); the meeting. */
export async function book(preview = false): Promise<{ id: string }> {
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
export async function bookAndCancel(): Promise<{ booked: string; canceled: string }> {
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
export async function logged(meetingId: string): Promise<{ id: string; type: string }[]> {
  return platform.dbs.webhooks!.query<{ id: string; type: string }>(
    "SELECT id, type FROM webhooks.event_log WHERE payload::jsonb -> 'data' -> 'meeting' ->> 'id' = $1",
    [meetingId],
  );
}

/** An open GET /events/stream: the messages and comments received so far. */
export interface OpenStream {
  status: number;
  headers: Headers;
  messages: EventSourceMessage[];
  comments: string[];
  body: string;
  /** Resolves with the time (Date.now()) the server ended the stream, or it was closed here. */
  ended: Promise<number>;
  close(): void;
}

/** Every stream a test opened, closed after it (a failed test would leave its own open). */
export const opened: OpenStream[] = [];

export async function openStream(
  apiKey: string,
  headers: Record<string, string> = {},
  query = "",
): Promise<OpenStream> {
  const controller = new AbortController();
  const res = await fetch(`${base}${API}/events/stream${query}`, {
    headers: { "x-platform-api-key": apiKey, accept: "text/event-stream", ...headers },
    signal: controller.signal,
  });
  let ended!: (at: number) => void;
  const stream: OpenStream = {
    status: res.status,
    headers: res.headers,
    messages: [],
    comments: [],
    body: "",
    ended: new Promise((resolve) => {
      ended = resolve;
    }),
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
    ended(Date.now());
  })();
  return stream;
}

export const CLI = fileURLToPath(new URL("../../../cli/bin/platform.js", import.meta.url));

export function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? "" } }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** An event as revenue's outbox relay would publish it, straight onto the in-process bus. */
export async function publishRevenueEvent(
  bus: InProcessBus,
  type: string,
  orgId: string,
  data: object,
): Promise<string> {
  const id = randomUUID();
  const envelope = { id, type, source: "revenue", time: new Date().toISOString(), data: { orgId, ...data } };
  await bus.publish(TOPICS.revenue, [toBusMessage(envelope, orgId)]);
  return id;
}

/** Starts the platform, listening on a free port, before the file's tests. */
export function useEventsPlatform(): void {
  beforeAll(async () => {
    platform = await t.start();
    await platform.app.listen({ port: 0, host: "127.0.0.1" });
    const address = platform.app.server.address();
    if (!address || typeof address === "string") throw new Error("gateway not listening");
    base = `http://127.0.0.1:${address.port}`;
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    // fetch (undici) may leave a connection open that never sends a request once a stream was
    // aborted; the server would wait for its headers timeout before closing.
    platform.app.server.closeAllConnections();
    await t.close();
  }, CLOSE_TIMEOUT_MS);
  // A fresh minute of the read bucket per test.
  beforeEach(() => clock.advance(61_000));
  afterEach(() => {
    for (const s of opened.splice(0)) s.close();
  });
}
