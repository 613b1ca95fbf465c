import { randomBytes } from "node:crypto";
import { createClient } from "@connectrpc/connect";
import { IdentityAdminService } from "@platform/contracts/identity";
import { adminClientInterceptor, httpTransport } from "@platform/kit/connect";
import { newId } from "@platform/kit/ids";
import { eventually } from "@platform/kit/testing";
import pg from "pg";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { basePort, type Started, sleep, startProcess } from "../../../test/support/processes.js";
import { startReceiver } from "./builders.js";

// Recover and the disable event in the distributed runtime: identity, scheduling, the webhooks
// API, the delivery worker and a gateway as separate processes on Postgres, events through
// Kafka (the bookings' on platform.scheduling.v1, the disable event through the webhooks
// service's own outbox on platform.webhooks.v1), local receivers answering as each test says.
const PG_URL = process.env.PG_URL ?? "postgres://postgres@127.0.0.1:5432";
const KAFKA_BROKERS = process.env.KAFKA_BROKERS ?? "127.0.0.1:19092";
const run = randomBytes(4).toString("hex");
const seed = `wh-rec-${run}`;
const dbs = {
  identity: `wh_rec_identity_${run}`,
  scheduling: `wh_rec_sched_${run}`,
  webhooks: `wh_rec_webhooks_${run}`,
};
const adminSecret = "wh-rec-admin-secret-0123456789";
const contextSecret = "wh-rec-context-secret-0123456789";
const port = basePort(3000);
const ports = {
  identity: port,
  admin: port + 1,
  scheduling: port + 2,
  webhooks: port + 3,
  delivery: port + 4,
  gateway: port + 5,
};
const BOOKED = "scheduling.smartscheduler.booked";
const DISABLED = "webhooks.subscription.disabled";
/** WEBHOOK_DISABLE_AFTER_MS of this test: long enough that the first test's outage (a few seconds) never reaches it. */
const DISABLE_AFTER_MS = 20_000;

const procs: Started[] = [];
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let apiKey = "";
let otherKey = "";

const webhooksEnv = {
  DATABASE_URL: `${PG_URL}/${dbs.webhooks}`,
  PORT: String(ports.webhooks),
  DELIVERY_PORT: String(ports.delivery),
  PLATFORM_CONTEXT_SECRET: contextSecret,
  KAFKA_BROKERS,
  SANDBOX_SEED: seed,
  // The receivers are on 127.0.0.1 over http: allowed explicitly, for this test only.
  WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
  WEBHOOKS_CONSUMER_GROUP: `webhooks-delivery-rec-${run}`,
  WEBHOOKS_TIMEOUT_MS: "3000",
  WEBHOOKS_POLL_MS: "100",
  WEBHOOK_DISABLE_AFTER_MS: String(DISABLE_AFTER_MS),
};

async function api(method: string, path: string, body?: unknown, key = apiKey): Promise<Response> {
  return fetch(`http://127.0.0.1:${ports.gateway}/api/v1alpha1${path}`, {
    method,
    headers: {
      "X-Platform-Api-Key": key,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
      ...(method === "POST" || method === "PATCH" ? { "idempotency-key": randomBytes(8).toString("hex") } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

async function json<T = Record<string, unknown>>(res: Promise<Response>, status: number): Promise<T> {
  const r = await res;
  const body = (await r.json()) as T;
  expect(r.status, JSON.stringify(body)).toBe(status);
  return body;
}

/** Non-overlapping bookable slot tokens of the sandbox's intro schedule. */
async function slotTokens(count: number): Promise<{ tokens: string[]; formValues: Record<string, unknown> }> {
  const list = await json<{ items: { id: string }[] }>(api("GET", "/smart-schedules?name=intro"), 200);
  const id = list.items[0]?.id ?? "";
  const detail = await json<{ matchingForm: { fields: { key: string; options: string[] }[] } }>(
    api("GET", `/smart-schedules/${id}`),
    200,
  );
  const region = detail.matchingForm.fields.find((f) => f.key === "region");
  const formValues = { region: region?.options[0] };
  const avail = await json<{
    hostGroups: { host: { userId: string }; slots: { slotToken: string; startTime: string; endTime: string }[] }[][];
  }>(api("POST", `/smart-schedules/${id}/availability`, { formValues }), 200);
  const kept: { userId: string; start: number; end: number; token: string }[] = [];
  for (const h of avail.hostGroups.flat()) {
    for (const slot of h.slots) {
      const [start, end] = [Date.parse(slot.startTime), Date.parse(slot.endTime)];
      const clash = kept.some((k) => k.userId === h.host.userId && start < k.end && k.start < end);
      if (!clash) kept.push({ userId: h.host.userId, start, end, token: slot.slotToken });
    }
  }
  expect(kept.length).toBeGreaterThanOrEqual(count);
  return { tokens: kept.slice(0, count).map((k) => k.token), formValues };
}

async function book(slotToken: string, formValues: Record<string, unknown>): Promise<string> {
  const body = await json<{ id: string }>(
    api("POST", "/scheduled-meetings", {
      slotToken,
      attendee: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com" },
      formValues,
      surveyResponses: { "What would you like to discuss?": "Webhooks" },
    }),
    201,
  );
  return body.id;
}

interface Delivery {
  id: string;
  eventId: string;
  status: string;
  attempt: number;
}
const deliveriesOf = async (sub: string) =>
  (await json<{ items: Delivery[] }>(api("GET", `/webhook-subscriptions/${sub}/deliveries?limit=100`), 200)).items;

async function subscribe(url: string, events: string[]): Promise<{ id: string; secret: string }> {
  return json(api("POST", "/webhook-subscriptions", { endpointUrl: url, events }), 201);
}

beforeAll(async () => {
  receiver = await startReceiver();
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
  procs.push(await startProcess("webhooks", "services/webhooks/src/main.ts", webhooksEnv, ports.webhooks));
  procs.push(
    await startProcess("webhooks-delivery", "services/webhooks/src/delivery-main.ts", webhooksEnv, ports.delivery),
  );
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
  const orgId = (name: string) => orgs.organizations.find((o) => o.name === name)?.id ?? "";
  const scopes = ["smart-scheduling:read", "smart-scheduling:write", "webhooks:read", "webhooks:write"];
  apiKey = (await admin.createToken({ orgId: orgId("Acme Corp"), name: `rec-it-${run}`, scopes })).key;
  const other = orgs.organizations.find((o) => o.name !== "Acme Corp")?.id ?? "";
  otherKey = (await admin.createToken({ orgId: other, name: `rec-it-other-${run}`, scopes })).key;
});

afterAll(async () => {
  for (const p of procs.reverse()) await p.stop();
  await receiver?.close();
  const client = new pg.Client({ connectionString: `${PG_URL}/postgres` });
  await client.connect();
  for (const name of Object.values(dbs)) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await client.end();
});

describe("recover and auto-disable over Kafka", () => {
  it("a receiver down for a while, then back: recover delivers every missed event exactly once", async () => {
    const sub = await subscribe(receiver.url, [BOOKED]);
    const since = new Date(Date.now() - 60_000).toISOString();
    const { tokens, formValues } = await slotTokens(3);
    receiver.state.fallback = { status: 503 };
    const meetings: string[] = [];
    for (const token of tokens) meetings.push(await book(token, formValues));
    // Each event failed twice (the first try and the 5 s retry); the next retry is 5 minutes away.
    await eventually(
      "two failed attempts of each booking",
      async () => {
        const failed = (await deliveriesOf(sub.id)).filter((d) => d.status === "failed");
        return new Set(failed.filter((d) => d.attempt === 2).map((d) => d.eventId)).size === 3 ? true : undefined;
      },
      60_000,
      250,
    );
    const health = await json<{ status: string; lastFailureAt: string | null }>(
      api("GET", `/webhook-subscriptions/${sub.id}`),
      200,
    );
    expect(health.status).toBe("failing");
    expect(health.lastFailureAt).not.toBeNull();

    receiver.state.fallback = { status: 200 };
    const before = receiver.received.length;
    const recovery = await json<{ id: string; queued: number; status: string }>(
      api("POST", `/webhook-subscriptions/${sub.id}/recover`, { since }),
      202,
    );
    expect(recovery).toMatchObject({ queued: 3 });
    const done = await eventually(
      "the recovery completed",
      async () => {
        const r = await json<{ status: string; delivered: number; failed: number }>(
          api("GET", `/webhook-subscriptions/${sub.id}/recoveries/${recovery.id}`),
          200,
        );
        return r.status === "completed" ? r : undefined;
      },
      60_000,
      250,
    );
    expect(done).toMatchObject({ delivered: 3, failed: 0 });
    // A while longer: nothing is sent again (the waiting retries were the recovery's).
    await sleep(6_000);
    const after = receiver.received.slice(before).map((r) => JSON.parse(r.body));
    expect(after.map((b) => b.data.meeting.id).sort()).toEqual([...meetings].sort());
    for (const r of receiver.received.slice(before))
      new Webhook(sub.secret).verify(r.body, r.headers as Record<string, string>);
    // A second recover finds nothing missed.
    const again = await json<{ queued: number; status: string }>(
      api("POST", `/webhook-subscriptions/${sub.id}/recover`, { since }),
      202,
    );
    expect(again).toMatchObject({ queued: 0, status: "completed" });
    const healthy = await json<{ status: string }>(api("GET", `/webhook-subscriptions/${sub.id}`), 200);
    expect(healthy.status).toBe("healthy");
    await api("DELETE", `/webhook-subscriptions/${sub.id}`);
  });

  it("a permanently failing endpoint is disabled, and the disable event reaches another subscription and the event log", async () => {
    const dead = await startReceiver();
    dead.state.fallback = { status: 500 };
    try {
      const failing = await subscribe(dead.url, [BOOKED]);
      const watcher = await subscribe(receiver.url, [DISABLED]);
      const { tokens, formValues } = await slotTokens(2);
      await book(tokens[0] as string, formValues);
      await eventually("a failed attempt", async () => (dead.received.length > 0 ? true : undefined), 60_000, 250);
      // A failure more than WEBHOOK_DISABLE_AFTER_MS after the first, within the run: disabled.
      await sleep(DISABLE_AFTER_MS + 1_000);
      await book(tokens[1] as string, formValues);
      const disabled = await eventually(
        "the subscription disabled",
        async () => {
          const s = await json<{ enabled: boolean; status: string; disabledReason: string | null }>(
            api("GET", `/webhook-subscriptions/${failing.id}`),
            200,
          );
          return s.enabled ? undefined : s;
        },
        60_000,
        250,
      );
      expect(disabled).toMatchObject({ status: "disabled", disabledReason: "failing" });
      const r = await eventually(
        "the disable event at the watcher",
        () => receiver.received.find((x) => JSON.parse(x.body).type === DISABLED),
        60_000,
        250,
      );
      const event = new Webhook(watcher.secret).verify(r.body, r.headers as Record<string, string>) as {
        id: string;
        data: Record<string, unknown>;
      };
      expect(event.data).toMatchObject({ subscriptionId: failing.id, endpointUrl: dead.url, reason: "failing" });
      const logged = await json<{ items: { id: string; type: string }[] }>(api("GET", `/events?type=${DISABLED}`), 200);
      expect(logged.items.map((e) => e.id)).toContain(event.id);
      // Only the watcher got it: the disabled subscription receives nothing more.
      expect(dead.received.some((x) => JSON.parse(x.body).type === DISABLED)).toBe(false);
    } finally {
      await dead.close();
    }
  }, 120_000);

  it("another organization's subscription, delivery or recovery is as absent as an unknown one", async () => {
    const sub = await subscribe(receiver.url, [BOOKED]);
    const ping = await json<{ id: string }>(api("POST", `/webhook-subscriptions/${sub.id}/test`), 202);
    const recovery = await json<{ id: string }>(
      api("POST", `/webhook-subscriptions/${sub.id}/recover`, { since: new Date(Date.now() - 60_000).toISOString() }),
      202,
    );
    const problem = async (res: Promise<Response>) => {
      const r = await res;
      expect(r.status).toBe(404);
      return ((await r.json()) as { type: string }).type.split("/").pop();
    };
    expect(
      await problem(api("GET", `/webhook-subscriptions/${sub.id}/recoveries/${recovery.id}`, undefined, otherKey)),
    ).toBe("webhook-subscription-not-found");
    expect(
      await problem(api("POST", `/webhook-subscriptions/${sub.id}/deliveries/${ping.id}/resend`, undefined, otherKey)),
    ).toBe("webhook-subscription-not-found");
    expect(await problem(api("GET", `/webhook-subscriptions/${sub.id}/recoveries/${newId("wrc_")}`))).toBe(
      "webhook-recovery-not-found",
    );
    expect(await problem(api("POST", `/webhook-subscriptions/${sub.id}/deliveries/${newId("wd_")}/resend`))).toBe(
      "webhook-delivery-not-found",
    );
  });
});
