import { randomBytes } from "node:crypto";
import { createClient } from "@connectrpc/connect";
import { IdentityAdminService } from "@platform/contracts/identity";
import { adminClientInterceptor, httpTransport } from "@platform/kit/connect";
import { eventually } from "@platform/kit/testing";
import { sandboxAccountId, sandboxOrgId } from "@platform/sandbox";
import { createClient as createRedis } from "redis";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startReceiver } from "../runtime/test/support/webhook-receiver.js";
import { type PreviousRelease, previousRelease } from "./support/previous-release.js";
import {
  basePort,
  KAFKA_BROKERS,
  REDIS_URL,
  runId,
  STACK_START_TIMEOUT_MS,
  type Stack,
  startStack,
} from "./support/processes.js";

// Mixed versions, as a rollout of one process at a time produces them: the current build's
// stack on real Postgres, Redis and Kafka, in which one process at a time is replaced by the
// previous release's build of it (releases/baseline.json, built from source by
// support/previous-release.ts), then put back. Each pairing runs the same smoke flow through
// the gateway: reads, an idempotent write replayed, a booking, and its webhook delivered to a
// local receiver and verified with the Standard Webhooks signature.
//
// Expand/contract: the current services start first and migrate their databases, so every
// previous-release service below serves a schema the current migrations already applied, as it
// does while a rollout is half done.
const run = runId();
const seed = `mixed-${run}`;
const adminSecret = "mixed-admin-secret-0123456789";
const contextSecret = "mixed-context-secret-0123456789";
const rateLimitPrefix = `platform:mixed:${run}:`;
const port = basePort(7);
const ports = {
  identity: port,
  identityAdmin: port + 1,
  scheduling: port + 2,
  crm: port + 3,
  crmAdmin: port + 4,
  revenue: port + 5,
  revenueAdmin: port + 6,
  analytics: port + 7,
  analyticsAdmin: port + 8,
  webhooks: port + 9,
  delivery: port + 10,
  gateway: port + 11,
  requestLogs: port + 12,
};
const url = (p: number) => `http://127.0.0.1:${p}`;
const BOOKED = "scheduling.smartscheduler.booked";
/** Several processes starting from source at once, and a first install of the previous release. */
const SETUP_TIMEOUT_MS = STACK_START_TIMEOUT_MS + 600_000;
const PAIRING_TIMEOUT_MS = 300_000;

let stack: Stack | undefined;
let previous: PreviousRelease;
let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
let secret = "";
const admin = createClient(
  IdentityAdminService,
  httpTransport(url(ports.identityAdmin), [adminClientInterceptor(adminSecret)]),
);

function api(key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return fetch(`${url(ports.gateway)}/api/v1alpha1${path}`, {
    method,
    headers: {
      "x-platform-api-key": key,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(60_000),
  });
}

/** A key of its own per pairing: the write tier's per-minute budget is per key. */
async function newKey(name: string): Promise<string> {
  const { key } = await admin.createToken({
    orgId: sandboxOrgId(seed, "acme"),
    name: `mixed-${name}-${run}`,
    scopes: [
      "organizations:read",
      "deals:read",
      "deals:write",
      "accounts:read",
      "email-blasts:read",
      "smart-scheduling:read",
      "smart-scheduling:write",
      "webhooks:read",
      "webhooks:write",
    ],
  });
  return key;
}

/** The smoke flow every pairing runs through the gateway. */
async function smoke(label: string): Promise<void> {
  const key = await newKey(label);
  // A read; the first may meet a process that has just started (the gateway's key lookup, a
  // service's first connection), so it is retried until it answers.
  await eventually(
    `${label}: GET /organizations/me`,
    async () => ((await api(key, "GET", "/organizations/me")).status === 200 ? true : undefined),
    60_000,
    250,
  );
  // A read of each service the flow does not write to as well.
  for (const path of ["/deals?limit=1", "/email-blasts?limit=1", "/accounts?limit=1"]) {
    const res = await api(key, "GET", path);
    expect(res.status, `${label}: GET ${path}: ${res.status === 200 ? "" : await res.text()}`).toBe(200);
  }

  // An idempotent write, then the same request again: the stored response, marked as a replay.
  const idempotencyKey = `mixed-${label}-${run}`;
  const deal = { name: `Mixed ${label} ${run}`, accountId: sandboxAccountId(seed, "analytical"), stage: "Discovery" };
  const first = await api(key, "POST", "/deals", deal, { "idempotency-key": idempotencyKey });
  const created = (await first.json()) as { id: string };
  expect(first.status, `${label}: POST /deals ${JSON.stringify(created)}`).toBe(201);
  expect(created.id).toMatch(/^deal_/);
  const again = await api(key, "POST", "/deals", deal, { "idempotency-key": idempotencyKey });
  expect(again.status, `${label}: POST /deals replayed`).toBe(201);
  expect(again.headers.get("x-idempotent-replay")).toBe("true");
  expect(((await again.json()) as { id: string }).id).toBe(created.id);

  // A booking: availability → a slot token → the meeting.
  const list = (await (await api(key, "GET", "/smart-schedules?name=intro")).json()) as { items: { id: string }[] };
  const scheduleId = list.items[0]?.id ?? "";
  expect(scheduleId, `${label}: the intro schedule`).not.toBe("");
  const detail = (await (await api(key, "GET", `/smart-schedules/${scheduleId}`)).json()) as {
    matchingForm: { fields: { key: string; options: string[] }[] };
  };
  const formValues = { region: detail.matchingForm.fields.find((f) => f.key === "region")?.options[0] };
  const availability = await api(
    key,
    "POST",
    `/smart-schedules/${scheduleId}/availability`,
    { formValues },
    { "idempotency-key": randomBytes(8).toString("hex") },
  );
  expect(availability.status, `${label}: availability`).toBe(200);
  const { hostGroups } = (await availability.json()) as { hostGroups: { slots: { slotToken: string }[] }[][] };
  const slotToken = hostGroups.flat().flatMap((h) => h.slots)[0]?.slotToken ?? "";
  expect(slotToken, `${label}: a free slot`).not.toBe("");
  const booking = await api(
    key,
    "POST",
    "/scheduled-meetings",
    {
      slotToken,
      attendee: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com" },
      formValues,
      surveyResponses: { "What would you like to discuss?": "Mixed versions" },
    },
    { "idempotency-key": randomBytes(8).toString("hex") },
  );
  const meeting = (await booking.json()) as { id: string };
  expect(booking.status, `${label}: book ${JSON.stringify(meeting)}`).toBe(201);

  // Its event, through Kafka and the delivery worker, at the local receiver, signed.
  const delivered = await eventually(
    `${label}: the booking's webhook at the receiver`,
    () =>
      receiver?.received.find((r) => {
        const body = JSON.parse(r.body) as { data?: { meeting?: { id?: string } } };
        return body.data?.meeting?.id === meeting.id;
      }),
    90_000,
    200,
  );
  const payload = new Webhook(secret).verify(delivered.body, delivered.headers as Record<string, string>) as {
    type: string;
  };
  expect(payload.type).toBe(BOOKED);
}

/** Runs `flow` with `name` replaced by the previous release's build of it, then puts the current build back. */
async function withPrevious(name: string, flow: () => Promise<void>): Promise<void> {
  const current = stack as Stack;
  await current.get(name).stop();
  await current.restart(name, { root: previous.root, env: { BUILD_COMMIT: previous.commit } });
  try {
    await flow();
  } finally {
    await current.get(name).stop();
    await current.restart(name);
  }
}

beforeAll(async () => {
  previous = previousRelease();
  receiver = await startReceiver();
  const service = { KAFKA_BROKERS, SANDBOX_SEED: seed };
  const webhooks = {
    ...service,
    PORT: String(ports.webhooks),
    DELIVERY_PORT: String(ports.delivery),
    WEBHOOKS_CONSUMER_GROUP: `mixed-delivery-${run}`,
    WEBHOOKS_POLL_MS: "100",
    // The receiver is plain http on loopback.
    WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
  };
  stack = await startStack({
    name: "platform_mixed",
    run,
    env: { PLATFORM_CONTEXT_SECRET: contextSecret },
    parallel: true,
    processes: [
      {
        name: "identity",
        entry: "services/identity/src/main.ts",
        database: "identity",
        port: ports.identityAdmin,
        env: {
          ...service,
          PORT: String(ports.identity),
          ADMIN_PORT: String(ports.identityAdmin),
          PLATFORM_ADMIN_SECRET: adminSecret,
        },
      },
      {
        name: "scheduling",
        entry: "services/scheduling/src/main.ts",
        database: "scheduling",
        port: ports.scheduling,
        env: { ...service, PORT: String(ports.scheduling) },
      },
      {
        name: "crm-data",
        entry: "services/crm-data/src/main.ts",
        database: "crm",
        port: ports.crmAdmin,
        env: {
          ...service,
          PORT: String(ports.crm),
          ADMIN_PORT: String(ports.crmAdmin),
          PLATFORM_ADMIN_SECRET: adminSecret,
        },
      },
      {
        name: "revenue",
        entry: "services/revenue/src/main.ts",
        database: "revenue",
        port: ports.revenueAdmin,
        env: {
          ...service,
          PORT: String(ports.revenue),
          ADMIN_PORT: String(ports.revenueAdmin),
          PLATFORM_ADMIN_SECRET: adminSecret,
          CRM_URL: url(ports.crm),
          IDENTITY_URL: url(ports.identity),
        },
      },
      {
        name: "analytics",
        entry: "services/analytics/src/main.ts",
        database: "analytics",
        port: ports.analyticsAdmin,
        env: {
          ...service,
          PORT: String(ports.analytics),
          ADMIN_PORT: String(ports.analyticsAdmin),
          PLATFORM_ADMIN_SECRET: adminSecret,
          CRM_URL: url(ports.crm),
        },
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
        // No previous build of it: the 1.0.0 release had no request log. It is never swapped;
        // the previous gateway publishes no summaries and serves no /request-logs, and the
        // current one's summaries reach it whichever build of each service answered.
        name: "request-logs",
        entry: "services/request-logs/src/main.ts",
        database: "request_logs",
        port: ports.requestLogs,
        env: { ...service, PORT: String(ports.requestLogs), REQUEST_LOGS_CONSUMER_GROUP: `request-logs-mixed-${run}` },
      },
      {
        name: "gateway",
        entry: "gateway/src/main.ts",
        port: ports.gateway,
        env: {
          PORT: String(ports.gateway),
          HOST: "127.0.0.1",
          IDENTITY_URL: url(ports.identity),
          SCHEDULING_URL: url(ports.scheduling),
          CRM_URL: url(ports.crm),
          REVENUE_URL: url(ports.revenue),
          ANALYTICS_URL: url(ports.analytics),
          WEBHOOKS_URL: url(ports.webhooks),
          REQUEST_LOGS_URL: url(ports.requestLogs),
          REDIS_URL,
          RATE_LIMIT_PREFIX: rateLimitPrefix,
        },
      },
    ],
  });
  // One subscription for the whole run, made with the current build.
  const key = await newKey("setup");
  const subscription = await eventually(
    "the webhook subscription",
    async () => {
      const res = await api(
        key,
        "POST",
        "/webhook-subscriptions",
        { endpointUrl: receiver?.url, events: [BOOKED] },
        { "idempotency-key": `mixed-sub-${run}` },
      );
      return res.status === 201 ? ((await res.json()) as { secret: string }) : undefined;
    },
    60_000,
    500,
  );
  secret = subscription.secret;
  expect(secret).toMatch(/^whsec_/);
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
  const redis = await createRedis({ url: REDIS_URL }).connect();
  const keys = await redis.keys(`${rateLimitPrefix}*`);
  if (keys.length > 0) await redis.del(keys);
  await redis.quit();
}, 120_000);

describe("mixed versions: the previous release beside the current build", () => {
  it(
    "the previous gateway in front of the current services",
    () =>
      withPrevious("gateway", async () => {
        const health = (await (await fetch(`${url(ports.gateway)}/healthz`)).json()) as Record<string, string>;
        expect(health).toMatchObject({ status: "ok", version: previous.version, commit: previous.commit });
        await smoke("prev-gateway");
      }),
    PAIRING_TIMEOUT_MS,
  );

  // Each on the database the current build's migrations already brought forward (expand/contract).
  // request-logs is not among them: the previous release has no such service (see the stack above).
  for (const service of ["scheduling", "revenue", "webhooks", "identity", "crm-data", "analytics"]) {
    it(
      `the current gateway with the previous ${service}`,
      () => withPrevious(service, () => smoke(`prev-${service}`)),
      PAIRING_TIMEOUT_MS,
    );
  }

  it(
    "the previous webhooks-delivery worker with the current publishers",
    () => withPrevious("webhooks-delivery", () => smoke("prev-delivery")),
    PAIRING_TIMEOUT_MS,
  );
});
