import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createClient } from "@connectrpc/connect";
import { IdentityAdminService } from "@platform/contracts/identity";
import { adminClientInterceptor, httpTransport } from "@platform/kit/connect";
import { eventually } from "@platform/kit/testing";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  basePort,
  KAFKA_BROKERS,
  REDIS_URL,
  runId,
  STACK_START_TIMEOUT_MS,
  type Stack,
  startStack,
} from "./support/processes.js";

// `platform listen` against the distributed runtime: identity, scheduling, the webhooks API,
// the delivery worker (which fans events out into the event log) and a gateway as processes,
// each service with its own database on the machine's Postgres, events through Kafka, the
// stream's slots in Redis. The CLI runs as its own process and forwards to a local receiver.
const run = runId();
const seed = `ev-it-${run}`;
const adminSecret = "ev-it-admin-secret-0123456789";
const contextSecret = "ev-it-context-secret-0123456789";
const port = basePort(3);
const ports = {
  identity: port,
  admin: port + 1,
  scheduling: port + 2,
  webhooks: port + 3,
  delivery: port + 4,
  gateway: port + 5,
};
const BOOKED = "scheduling.smartscheduler.booked";
const API_URL = `http://127.0.0.1:${ports.gateway}/api/v1alpha1`;

let stack: Stack | undefined;
let apiKey = "";

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}
const received: Received[] = [];
let receiver: Server;
let receiverUrl = "";

async function api(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${API_URL}${path}`, {
    method,
    headers: {
      "X-Platform-Api-Key": apiKey,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
      ...(method === "POST" ? { "idempotency-key": randomBytes(8).toString("hex") } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

/** Bookable, pairwise non-overlapping slot tokens of the sandbox's intro schedule. */
async function slotTokens(count: number): Promise<{ tokens: string[]; formValues: Record<string, unknown> }> {
  // The first calls may meet services still warming up (or the token not yet known to the gateway).
  const list = await eventually(
    "the intro schedule",
    async () => {
      const res = await api("GET", "/smart-schedules?name=intro");
      return res.status === 200 ? ((await res.json()) as { items: { id: string }[] }) : undefined;
    },
    60_000,
    500,
  );
  const id = list.items[0]?.id ?? "";
  const detail = (await (await api("GET", `/smart-schedules/${id}`)).json()) as {
    matchingForm: { fields: { key: string; options: string[] }[] };
  };
  const formValues = { region: detail.matchingForm.fields.find((f) => f.key === "region")?.options[0] };
  const avail = (await (await api("POST", `/smart-schedules/${id}/availability`, { formValues })).json()) as {
    hostGroups: { host: { userId: string }; slots: { slotToken: string; startTime: string; endTime: string }[] }[][];
  };
  const kept: { userId: string; start: number; end: number; token: string }[] = [];
  for (const h of avail.hostGroups.flat()) {
    for (const slot of h.slots) {
      const [start, end] = [Date.parse(slot.startTime), Date.parse(slot.endTime)];
      if (!kept.some((k) => k.userId === h.host.userId && start < k.end && k.start < end)) {
        kept.push({ userId: h.host.userId, start, end, token: slot.slotToken });
      }
    }
  }
  expect(kept.length).toBeGreaterThanOrEqual(count);
  return { tokens: kept.slice(0, count).map((k) => k.token), formValues };
}

async function book(slotToken: string, formValues: Record<string, unknown>): Promise<string> {
  const res = await api("POST", "/scheduled-meetings", {
    slotToken,
    attendee: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com" },
    formValues,
    surveyResponses: { "What would you like to discuss?": "Events" },
  });
  const body = (await res.json()) as { id: string };
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body.id;
}

/** `npx platform listen …` as its own process; its stdout lines as they come. */
function startListener(args: string[]): { proc: ChildProcess; lines: string[]; stderr: () => string } {
  const proc = spawn(
    process.execPath,
    [
      "cli/bin/platform.js",
      "listen",
      "--forward-to",
      receiverUrl,
      "--api-url",
      API_URL,
      "--events",
      BOOKED,
      "--json",
      ...args,
    ],
    { env: { ...process.env, PLATFORM_API_KEY: apiKey }, stdio: ["ignore", "pipe", "pipe"] },
  );
  const lines: string[] = [];
  let buffer = "";
  let err = "";
  proc.stdout?.on("data", (d) => {
    buffer += d;
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    lines.push(...parts.filter(Boolean));
  });
  proc.stderr?.on("data", (d) => {
    err += d;
  });
  return { proc, lines, stderr: () => err };
}

const meetingOf = (r: Received) => (JSON.parse(r.body) as { data: { meeting: { id: string } } }).data.meeting.id;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      res.statusCode = 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`;

  const service = { KAFKA_BROKERS, SANDBOX_SEED: seed };
  const webhooks = {
    ...service,
    PORT: String(ports.webhooks),
    DELIVERY_PORT: String(ports.delivery),
    WEBHOOKS_CONSUMER_GROUP: `webhooks-delivery-ev-it-${run}`,
  };
  stack = await startStack({
    name: "ev_it",
    run,
    env: { PLATFORM_CONTEXT_SECRET: contextSecret },
    processes: [
      {
        name: "identity",
        entry: "services/identity/src/main.ts",
        database: "identity",
        port: ports.admin,
        env: {
          ...service,
          PORT: String(ports.identity),
          ADMIN_PORT: String(ports.admin),
          PLATFORM_ADMIN_SECRET: adminSecret,
        },
      },
      {
        name: "scheduling",
        entry: "services/scheduling/src/main.ts",
        database: "sched",
        port: ports.scheduling,
        env: { ...service, PORT: String(ports.scheduling) },
      },
      {
        name: "webhooks",
        entry: "services/webhooks/src/main.ts",
        database: "webhooks",
        port: ports.webhooks,
        env: webhooks,
      },
      {
        name: "webhooks-delivery",
        entry: "services/webhooks/src/delivery-main.ts",
        database: "webhooks",
        port: ports.delivery,
        env: webhooks,
      },
      {
        name: "gateway",
        entry: "gateway/src/main.ts",
        port: ports.gateway,
        env: {
          PORT: String(ports.gateway),
          HOST: "127.0.0.1",
          IDENTITY_URL: `http://127.0.0.1:${ports.identity}`,
          SCHEDULING_URL: `http://127.0.0.1:${ports.scheduling}`,
          WEBHOOKS_URL: `http://127.0.0.1:${ports.webhooks}`,
          REDIS_URL,
          RATE_LIMIT_PREFIX: `platform:ev-it:${run}:`,
          EVENTS_STREAM_POLL_MS: "200",
        },
      },
    ],
  });
  const admin = createClient(
    IdentityAdminService,
    httpTransport(`http://127.0.0.1:${ports.admin}`, [adminClientInterceptor(adminSecret)]),
  );
  const acme = (await admin.listOrganizations({})).organizations.find((o) => o.name === "Acme Corp")?.id ?? "";
  apiKey = (
    await admin.createToken({
      orgId: acme,
      name: `events-it-${run}`,
      scopes: ["smart-scheduling:read", "smart-scheduling:write", "webhooks:read"],
    })
  ).key;
}, STACK_START_TIMEOUT_MS);

afterAll(async () => {
  await stack?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
});

describe("platform listen on the distributed runtime", () => {
  it("forwards a booking made through the gateway, signed; a listener restarted with the last event id misses nothing", async () => {
    const { tokens, formValues } = await slotTokens(3);
    const first = startListener([]);
    try {
      await eventually(
        "the listener to connect",
        () => (first.stderr().includes("connected") ? true : undefined),
        60_000,
        100,
      );
      const secret = (JSON.parse(first.lines[0] ?? "{}") as { secret?: string }).secret ?? "";
      expect(secret).toMatch(/^whsec_/);

      const booked = [await book(tokens[0] as string, formValues)];
      const r = await eventually(
        "the booking at the receiver",
        () => received.find((x) => meetingOf(x) === booked[0]),
        60_000,
        100,
      );
      // Real time on both sides: the verifier's timestamp tolerance applies as in production.
      const payload = new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as {
        id: string;
        type: string;
      };
      expect(payload.type).toBe(BOOKED);
      expect(payload.id).toMatch(/^evt_/);
      expect(r.headers["webhook-id"]).toBe(payload.id);
      // The same event, byte for byte, as the log shows it.
      const logged = await api("GET", `/events/${payload.id}`);
      expect(await logged.text()).toBe(r.body);
      // One line per event: the receiver's status and the time it took.
      const line = await eventually("the event's line", () => first.lines.find((l) => l.includes(payload.id)), 10_000);
      expect(JSON.parse(line)).toMatchObject({ id: payload.id, type: BOOKED, status: 200, ms: expect.any(Number) });

      // The listener dies; two bookings happen while none runs.
      first.proc.kill("SIGKILL");
      await new Promise((resolve) => first.proc.once("exit", resolve));
      booked.push(await book(tokens[1] as string, formValues));
      booked.push(await book(tokens[2] as string, formValues));

      const second = startListener(["--last-event-id", payload.id, "--secret", secret]);
      try {
        await eventually(
          "every booking at the receiver",
          () => (booked.every((id) => received.some((x) => meetingOf(x) === id)) ? true : undefined),
          60_000,
          100,
        );
        // A moment more: nothing arrives twice.
        await new Promise((resolve) => setTimeout(resolve, 1500));
        const ids = received.map((x) => String(x.headers["webhook-id"]));
        expect(new Set(ids).size).toBe(ids.length);
        expect(received.map(meetingOf)).toEqual(booked);
        for (const x of received) new Webhook(secret).verify(x.body, x.headers as Record<string, string>);
      } finally {
        second.proc.kill("SIGTERM");
      }
    } finally {
      first.proc.kill("SIGKILL");
    }
  });
});
