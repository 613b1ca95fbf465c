import { randomBytes } from "node:crypto";
import { createClient } from "@connectrpc/connect";
import { IdentityAdminService } from "@platform/contracts/identity";
import { adminClientInterceptor, httpTransport } from "@platform/kit/connect";
import { eventually } from "@platform/kit/testing";
import pg from "pg";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { basePort, type Started, sleep, startProcess } from "../../../test/support/processes.js";
import { startHttpsReceiver, testCertificates } from "./https-receiver.js";

// Webhook delivery in the distributed runtime for real: identity, scheduling, the webhooks
// API, the delivery worker and a gateway as separate processes, each service with a
// database of its own on the machine's Postgres, events through the local Kafka broker, and
// an HTTPS receiver whose self-signed CA only the delivery worker is told to trust.
const PG_URL = process.env.PG_URL ?? "postgres://postgres@127.0.0.1:5432";
const KAFKA_BROKERS = process.env.KAFKA_BROKERS ?? "127.0.0.1:19092";
const run = randomBytes(4).toString("hex");
const seed = `wh-it-${run}`;
const dbs = { identity: `wh_it_identity_${run}`, scheduling: `wh_it_sched_${run}`, webhooks: `wh_it_webhooks_${run}` };
const adminSecret = "wh-it-admin-secret-0123456789";
const contextSecret = "wh-it-context-secret-0123456789";
const port = basePort(4000);
const ports = {
  identity: port,
  admin: port + 1,
  scheduling: port + 2,
  webhooks: port + 3,
  delivery: port + 4,
  gateway: port + 5,
};
const BOOKED = "scheduling.smartscheduler.booked";

const certs = testCertificates();
const procs: Started[] = [];
let receiver: Awaited<ReturnType<typeof startHttpsReceiver>>;
let apiKey = "";
let secret = "";

const deliveryEnv = {
  DATABASE_URL: `${PG_URL}/${dbs.webhooks}`,
  PORT: String(ports.webhooks),
  DELIVERY_PORT: String(ports.delivery),
  PLATFORM_CONTEXT_SECRET: contextSecret,
  KAFKA_BROKERS,
  SANDBOX_SEED: seed,
  // The receiver is on 127.0.0.1: allowed explicitly, for this test only. It is still HTTPS.
  WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
  WEBHOOKS_CA_FILE: certs.caFile,
  WEBHOOKS_CONSUMER_GROUP: `webhooks-delivery-it-${run}`,
  WEBHOOKS_TIMEOUT_MS: "3000",
  // A killed worker's claims are taken over after this.
  WEBHOOKS_LEASE_MS: "5000",
  WEBHOOKS_POLL_MS: "100",
};
const startDelivery = () =>
  startProcess("webhooks-delivery", "services/webhooks/src/delivery-main.ts", deliveryEnv, ports.delivery);

async function api(method: string, path: string, body?: unknown, key = apiKey): Promise<Response> {
  return fetch(`http://127.0.0.1:${ports.gateway}/api/v1alpha1${path}`, {
    method,
    headers: {
      "X-Platform-Api-Key": key,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
      ...(method === "POST" ? { "idempotency-key": randomBytes(8).toString("hex") } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

/** Bookable slot tokens of the sandbox's intro schedule, all different. */
async function slotTokens(count: number): Promise<{ tokens: string[]; formValues: Record<string, unknown> }> {
  const list = (await (await api("GET", "/smart-schedules?name=intro")).json()) as { items: { id: string }[] };
  const id = list.items[0]?.id ?? "";
  const detail = (await (await api("GET", `/smart-schedules/${id}`)).json()) as {
    matchingForm: { fields: { key: string; options: string[] }[] };
  };
  const region = detail.matchingForm.fields.find((f) => f.key === "region");
  const formValues = { region: region?.options[0] };
  const avail = (await (await api("POST", `/smart-schedules/${id}/availability`, { formValues })).json()) as {
    hostGroups: { host: { userId: string }; slots: { slotToken: string; startTime: string; endTime: string }[] }[][];
  };
  // Slots overlap (their step is shorter than a meeting) and a host can be in several groups:
  // keep only slots that overlap no slot already kept for the same host.
  const kept: { userId: string; start: number; end: number; token: string }[] = [];
  for (const h of avail.hostGroups.flat()) {
    for (const slot of h.slots) {
      const [start, end] = [Date.parse(slot.startTime), Date.parse(slot.endTime)];
      const clash = kept.some((k) => k.userId === h.host.userId && start < k.end && k.start < end);
      if (!clash) kept.push({ userId: h.host.userId, start, end, token: slot.slotToken });
    }
  }
  const tokens = kept.map((k) => k.token);
  expect(tokens.length).toBeGreaterThanOrEqual(count);
  return { tokens: tokens.slice(0, count), formValues };
}

async function book(slotToken: string, formValues: Record<string, unknown>): Promise<string> {
  const res = await api("POST", "/scheduled-meetings", {
    slotToken,
    attendee: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com" },
    formValues,
    surveyResponses: { "What would you like to discuss?": "Webhooks" },
  });
  const body = (await res.json()) as { id: string };
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body.id;
}

const meetingIdsReceived = () =>
  new Set(
    receiver.received
      .map((r) => JSON.parse(r.body))
      .filter((b) => b.type === BOOKED)
      .map((b) => b.data.meeting.id),
  );

beforeAll(async () => {
  receiver = await startHttpsReceiver(certs);
  const common = { PLATFORM_CONTEXT_SECRET: contextSecret, KAFKA_BROKERS, SANDBOX_SEED: seed };
  procs.push(
    await startProcess(
      "identity",
      "services/identity/src/main.ts",
      {
        ...common,
        DATABASE_URL: `${PG_URL}/${dbs.identity}`,
        PORT: String(ports.identity),
        ADMIN_PORT: String(ports.admin),
        PLATFORM_ADMIN_SECRET: adminSecret,
      },
      ports.admin,
    ),
  );
  procs.push(
    await startProcess(
      "scheduling",
      "services/scheduling/src/main.ts",
      { ...common, DATABASE_URL: `${PG_URL}/${dbs.scheduling}`, PORT: String(ports.scheduling) },
      ports.scheduling,
    ),
  );
  procs.push(await startProcess("webhooks", "services/webhooks/src/main.ts", deliveryEnv, ports.webhooks));
  procs.push(await startDelivery());
  procs.push(
    await startProcess(
      "gateway",
      "gateway/src/main.ts",
      {
        PORT: String(ports.gateway),
        HOST: "127.0.0.1",
        IDENTITY_URL: `http://127.0.0.1:${ports.identity}`,
        SCHEDULING_URL: `http://127.0.0.1:${ports.scheduling}`,
        WEBHOOKS_URL: `http://127.0.0.1:${ports.webhooks}`,
        PLATFORM_CONTEXT_SECRET: contextSecret,
      },
      ports.gateway,
    ),
  );
  const admin = createClient(
    IdentityAdminService,
    httpTransport(`http://127.0.0.1:${ports.admin}`, [adminClientInterceptor(adminSecret)]),
  );
  const orgs = await admin.listOrganizations({});
  const acme = orgs.organizations.find((o) => o.name === "Acme Corp")?.id ?? "";
  const created = await admin.createToken({
    orgId: acme,
    name: `webhooks-it-${run}`,
    scopes: ["smart-scheduling:read", "smart-scheduling:write", "webhooks:read", "webhooks:write"],
  });
  apiKey = created.key;
  const sub = await api("POST", "/webhook-subscriptions", { endpointUrl: receiver.url, events: [BOOKED] });
  const body = (await sub.json()) as { secret: string };
  expect(sub.status, JSON.stringify(body)).toBe(201);
  secret = body.secret;
});

afterAll(async () => {
  for (const p of procs.reverse()) await p.stop();
  await receiver?.close();
  certs.cleanup();
  const client = new pg.Client({ connectionString: `${PG_URL}/postgres` });
  await client.connect();
  for (const name of Object.values(dbs)) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await client.end();
});

describe("webhook delivery over Kafka", () => {
  it("a booking through the gateway reaches the HTTPS receiver, signed", async () => {
    const { tokens, formValues } = await slotTokens(1);
    const meetingId = await book(tokens[0] as string, formValues);
    const r = await eventually(
      "the booking's webhook",
      () => receiver.received.find((x) => JSON.parse(x.body).data?.meeting?.id === meetingId),
      60_000,
    );
    // Real time on both sides: the verifier's timestamp tolerance applies as in production.
    const payload = new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { type: string };
    expect(payload.type).toBe(BOOKED);
    const meeting = await (await api("GET", `/scheduled-meetings/${meetingId}`)).json();
    expect((payload as unknown as { data: { meeting: unknown } }).data.meeting).toEqual(meeting);
  });

  it("every event of a burst is delivered at least once although the worker is killed mid-way", async () => {
    const { tokens, formValues } = await slotTokens(10);
    // Slow answers keep attempts in flight when the worker dies.
    receiver.state.delayMs = 700;
    const booked: string[] = [];
    for (const token of tokens.slice(0, 5)) booked.push(await book(token, formValues));
    await eventually(
      "a first delivery of the burst",
      () => (booked.some((id) => meetingIdsReceived().has(id)) ? true : undefined),
      60_000,
    );

    const worker = procs.find((p) => p.name === "webhooks-delivery");
    worker?.proc.kill("SIGKILL");
    await new Promise((resolve) => worker?.proc.once("exit", resolve));
    procs.splice(procs.indexOf(worker as Started), 1);
    // Mid-way: some of the burst was not acknowledged when the worker died (the first booking's one was).
    const db = new pg.Client({ connectionString: `${PG_URL}/${dbs.webhooks}` });
    await db.connect();
    const [done] = (await db.query("SELECT count(*)::int AS n FROM webhooks.attempts WHERE status = 'succeeded'")).rows;
    await db.end();
    expect(done.n - 1).toBeLessThan(5);
    // Bookings while no worker runs: their events wait in Kafka.
    for (const token of tokens.slice(5)) booked.push(await book(token, formValues));
    await sleep(500);
    receiver.state.delayMs = 0;
    procs.push(await startDelivery());

    await eventually(
      "every booking delivered",
      () => (booked.every((id) => meetingIdsReceived().has(id)) ? true : undefined),
      90_000,
      200,
    );
    for (const r of receiver.received) new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
    // At least once: a redelivery keeps its webhook-id, so a receiver de-duplicates on it.
    const ids = receiver.received.map((r) => String(r.headers["webhook-id"]));
    expect(new Set(ids).size).toBe(booked.length + 1);
  });
});
