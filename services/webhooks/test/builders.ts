import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { create, toJson } from "@bufbuild/protobuf";
import { timestampFromDate, ValueSchema } from "@bufbuild/protobuf/wkt";
import {
  MeetingBookedSchema,
  MeetingCanceledSchema,
  MeetingRescheduledSchema,
} from "@platform/contracts/events/scheduling";
import { type Meeting, MeetingSchema } from "@platform/contracts/scheduling";
import type { EventBus } from "@platform/kit/bus";
import type { Clock } from "@platform/kit/clock";
import type { Routes } from "@platform/kit/connect";
import { type Db, openPglite, pgliteDb } from "@platform/kit/db";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import { newId } from "@platform/kit/ids";
import { createLogger } from "@platform/kit/logger";
import { kitMigrations, migrate } from "@platform/kit/migrate";
import { toBusMessage } from "@platform/kit/outbox";
import { callerOf as kitCallerOf } from "@platform/kit/testing";
import { Webhook } from "standardwebhooks";
import { vi } from "vitest";
import type { Resolver } from "../src/domain/endpoint.js";
import { WEBHOOKS_SCHEMA, webhooksMigrations } from "../src/server.js";

export const CONTEXT_SECRET = "test-context-secret-0123456789";
export const CURSOR_SECRET = "test-cursor-secret-0123456789";
export const SCOPES = ["webhooks:read", "webhooks:write"];
export const silentLogger = createLogger("webhooks-test", "silent");

type PGlite = Awaited<ReturnType<typeof openPglite>>;

/** A migrated webhooks schema on an in-memory PGlite. */
export async function openTestDb(): Promise<{ pglite: PGlite; db: Db }> {
  const pglite = await openPglite();
  const db = pgliteDb(pglite, WEBHOOKS_SCHEMA);
  await migrate(db, [kitMigrations, webhooksMigrations]);
  return { pglite, db };
}

export function callerOf(routes: Routes, clock: Clock) {
  return kitCallerOf(routes, clock, { contextSecret: CONTEXT_SECRET, defaultScopes: SCOPES });
}

/** A resolver from a fixed table: names not in it do not resolve. */
export function fakeResolver(table: Record<string, string[]>): Resolver {
  return async (host) => {
    const found = table[host.toLowerCase()];
    if (!found) throw Object.assign(new Error(`${host} not found`), { code: "ENOTFOUND" });
    return found;
  };
}

/** A request the receiver got. */
export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  path: string;
}

/** What the receiver answers: a status and headers, after an optional delay or once `until` settles. */
export interface Reply {
  status: number;
  headers?: Record<string, string>;
  delayMs?: number;
  /** A body of this many bytes in place of "ok": an endpoint that answers at length. */
  bodyBytes?: number;
  /** Holds the answer until this settles: an endpoint that hangs for as long as a test needs. */
  until?: Promise<unknown>;
}

/**
 * A local HTTP endpoint recording every POST; `replies` answers them in turn, then
 * `state.fallback` (200 unless a test changes it).
 */
export async function startReceiver(): Promise<{
  url: string;
  received: Received[];
  replies: Reply[];
  state: { fallback: Reply };
  close: () => Promise<void>;
}> {
  const received: Received[] = [];
  const replies: Reply[] = [];
  const state: { fallback: Reply } = { fallback: { status: 200 } };
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => {
      received.push({ headers: req.headers, body, path: req.url ?? "" });
      const reply = replies.shift() ?? state.fallback;
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(reply.status, reply.headers ?? {});
        res.end(reply.bodyBytes === undefined ? "ok" : Buffer.alloc(reply.bodyBytes, "x"));
      };
      if (reply.until) void reply.until.then(send);
      else if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    replies,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Verifies a received webhook with the standardwebhooks package (a third-party verifier). Its
 * timestamp tolerance reads the system time, which is pinned to the test clock meanwhile.
 */
export function verifyWebhook(secret: string, r: Received, at: Date): unknown {
  const spy = vi.spyOn(Date, "now").mockReturnValue(at.getTime());
  try {
    return new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
  } finally {
    spy.mockRestore();
  }
}

/** A canonical meeting of `orgId` as scheduling publishes it. */
export function meeting(orgId: string, overrides: Partial<{ preview: boolean; id: string }> = {}): Meeting {
  const at = new Date("2026-01-20T15:00:00Z");
  return create(MeetingSchema, {
    id: overrides.id ?? newId("mtg_"),
    orgId,
    host: {
      userId: newId("usr_"),
      email: "host@acme.example",
      firstName: "Hal",
      lastName: "Host",
      displayName: "Hal Host",
    },
    attendee: { email: "ada@example.com", firstName: "Ada", lastName: "Lovelace", phone: "+14155550123" },
    additionalAttendees: [],
    title: "Intro",
    startTime: timestampFromDate(at),
    endTime: timestampFromDate(new Date(at.getTime() + 1_800_000)),
    timeZone: "Europe/Berlin",
    status: "scheduled",
    createTime: timestampFromDate(new Date("2026-01-15T12:00:00Z")),
    updateTime: timestampFromDate(new Date("2026-01-15T12:00:00Z")),
    smartScheduling: {
      scheduleId: newId("sched_"),
      formValues: [{ key: "region", answer: create(ValueSchema, { kind: { case: "stringValue", value: "EMEA" } }) }],
      surveyResponses: [],
      rescheduleUrl: "https://book.test.example/r",
      cancelUrl: "https://book.test.example/c",
      preview: overrides.preview ?? false,
    },
  });
}

type MeetingEventKind = "booked" | "rescheduled" | "canceled";

/** Publishes a meeting event on the scheduling topic as scheduling's outbox relay would; returns its id. */
export async function publishMeetingEvent(
  bus: Pick<EventBus, "publish">,
  kind: MeetingEventKind,
  m: Meeting,
  opts: { reason?: string; sandbox?: boolean; at?: Date } = {},
): Promise<string> {
  const id = randomUUID();
  const data =
    kind === "booked"
      ? toJson(MeetingBookedSchema, create(MeetingBookedSchema, { meeting: m, sandbox: opts.sandbox ?? false }))
      : kind === "rescheduled"
        ? toJson(MeetingRescheduledSchema, create(MeetingRescheduledSchema, { meeting: m, reason: opts.reason ?? "" }))
        : toJson(
            MeetingCanceledSchema,
            create(MeetingCanceledSchema, { meeting: m, reason: opts.reason ?? "", sendNotifications: true }),
          );
  const type =
    kind === "booked"
      ? EVENT_TYPES.meetingBooked
      : kind === "rescheduled"
        ? EVENT_TYPES.meetingRescheduled
        : EVENT_TYPES.meetingCanceled;
  const envelope = { id, type, source: "scheduling", subject: m.id, time: (opts.at ?? new Date()).toISOString(), data };
  await bus.publish(TOPICS.scheduling, [toBusMessage(envelope, m.orgId)]);
  return id;
}

/** Publishes a revenue event (its data as published, with orgId). */
export async function publishRevenueEvent(
  bus: Pick<EventBus, "publish">,
  type: string,
  orgId: string,
  data: object,
): Promise<string> {
  const id = randomUUID();
  const envelope = { id, type, source: "revenue", time: new Date().toISOString(), data: { orgId, ...data } };
  await bus.publish(TOPICS.revenue, [toBusMessage(envelope, orgId)]);
  return id;
}
