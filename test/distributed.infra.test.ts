import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { ProblemSchema } from "@platform/contracts/common";
import { IdentityAdminService, OrganizationService } from "@platform/contracts/identity";
import { adminClientInterceptor, httpTransport } from "@platform/kit/connect";
import { TOPICS } from "@platform/kit/events";
import { eventually } from "@platform/kit/testing";
import { sandboxAccountId, sandboxContactId } from "@platform/sandbox";
import { Kafka, logLevel } from "kafkajs";
import pg from "pg";
import { createClient as createRedis } from "redis";
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

// The distributed runtime for real: identity and two gateways as separate processes, a
// database of their own on the machine's Postgres, shared Redis, the local Kafka broker.
const run = runId();
const rateLimitPrefix = `platform:it:${run}:`;
const adminSecret = "it-admin-secret-0123456789";
const contextSecret = "it-context-secret-0123456789";
const port = basePort(0);
const ports = {
  identity: port,
  admin: port + 1,
  gatewayA: port + 2,
  gatewayB: port + 3,
  scheduling: port + 4,
  crm: port + 5,
  crmAdmin: port + 6,
  webhooks: port + 7,
};

let stack: Stack | undefined;
const admin = createClient(
  IdentityAdminService,
  httpTransport(`http://127.0.0.1:${ports.admin}`, [adminClientInterceptor(adminSecret)]),
);
let acmeOrgId = "";

function gatewayEnv(p: number): Record<string, string> {
  return {
    PORT: String(p),
    HOST: "127.0.0.1",
    IDENTITY_URL: `http://127.0.0.1:${ports.identity}`,
    SCHEDULING_URL: `http://127.0.0.1:${ports.scheduling}`,
    CRM_URL: `http://127.0.0.1:${ports.crm}`,
    WEBHOOKS_URL: `http://127.0.0.1:${ports.webhooks}`,
    REDIS_URL,
    RATE_LIMIT_PREFIX: rateLimitPrefix,
    // Long enough that only the revocation event can explain a key dying within seconds.
    TOKEN_CACHE_TTL_MS: "600000",
  };
}

const get = (p: number, key: string, headers: Record<string, string> = {}) =>
  fetch(`http://127.0.0.1:${p}/api/v1alpha1/organizations/me`, { headers: { "X-Platform-Api-Key": key, ...headers } });

/** A GET /events/stream of `key` on the gateway at `p`: its text so far, and when it ended. */
async function openStream(p: number, key: string) {
  const res = await fetch(`http://127.0.0.1:${p}/api/v1alpha1/events/stream`, {
    headers: { "X-Platform-Api-Key": key },
  });
  expect(res.status).toBe(200);
  const stream = { text: "", endedAt: 0, ended: Promise.resolve() };
  const decoder = new TextDecoder();
  stream.ended = (async () => {
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) stream.text += decoder.decode(chunk);
    stream.endedAt = Date.now();
  })();
  return stream;
}

beforeAll(async () => {
  const service = { SANDBOX_SEED: `it-${run}` };
  stack = await startStack({
    name: "platform_it",
    run,
    env: { PLATFORM_CONTEXT_SECRET: contextSecret, KAFKA_BROKERS },
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
        // The event log behind GET /events/stream.
        name: "webhooks",
        entry: "services/webhooks/src/main.ts",
        database: "webhooks",
        port: ports.webhooks,
        env: { ...service, PORT: String(ports.webhooks), WEBHOOKS_CONSUMER_GROUP: `webhooks-it-${run}` },
      },
      { name: "gateway-a", entry: "gateway/src/main.ts", port: ports.gatewayA, env: gatewayEnv(ports.gatewayA) },
      { name: "gateway-b", entry: "gateway/src/main.ts", port: ports.gatewayB, env: gatewayEnv(ports.gatewayB) },
    ],
  });
  const orgs = await admin.listOrganizations({});
  acmeOrgId = orgs.organizations.find((o) => o.name === "Acme Corp")?.id ?? "";
  expect(acmeOrgId).toMatch(/^org_/);
}, STACK_START_TIMEOUT_MS);

afterAll(async () => {
  await stack?.stop();
  const redis = await createRedis({ url: REDIS_URL }).connect();
  const keys = await redis.keys(`${rateLimitPrefix}*`);
  if (keys.length > 0) await redis.del(keys);
  await redis.quit();
});

describe("distributed runtime", () => {
  it("refuses a call that did not come through the gateway with missing-trust-header", async () => {
    const direct = createClient(OrganizationService, httpTransport(`http://127.0.0.1:${ports.identity}`));
    const err = await direct.getOrganization({}).catch((e: unknown) => ConnectError.from(e));
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.Unauthenticated);
    const [detail] = (err as ConnectError).findDetails(ProblemSchema);
    expect(detail).toMatchObject({ name: "missing-trust-header", status: 401 });
  });

  it("publishes an outboxed event to Kafka with CloudEvents headers", async () => {
    const kafka = new Kafka({ brokers: KAFKA_BROKERS.split(","), clientId: `it-${run}`, logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: `it-consumer-${run}` });
    const seen: { type: string; subject: string }[] = [];
    await consumer.connect();
    await consumer.subscribe({ topic: TOPICS.identity, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        seen.push({
          type: String(message.headers?.ce_type ?? ""),
          subject: String(message.headers?.ce_subject ?? ""),
        });
      },
    });
    try {
      const created = await admin.createToken({ orgId: acmeOrgId, name: "kafka-it", scopes: ["organizations:read"] });
      const tokenId = created.token?.id ?? "";
      await eventually(
        "TokenCreated on Kafka",
        () => (seen.some((e) => e.subject === tokenId && e.type.endsWith("TokenCreated")) ? true : undefined),
        60_000,
      );
    } finally {
      await consumer.disconnect();
    }
  });

  it("purges a revoked key from every gateway within seconds", async () => {
    const { key, token } = await admin.createToken({
      orgId: acmeOrgId,
      name: "revoke-it",
      scopes: ["organizations:read"],
    });
    expect((await get(ports.gatewayA, key)).status).toBe(200);
    expect((await get(ports.gatewayB, key)).status).toBe(200);
    await admin.revokeToken({ tokenId: token?.id ?? "" });
    for (const p of [ports.gatewayA, ports.gatewayB]) {
      const res = await eventually(
        "the revocation to reach the gateway",
        async () => {
          const r = await get(p, key);
          return r.status === 401 ? r : undefined;
        },
        20_000,
      );
      const body = (await res.json()) as { type: string };
      expect(body.type).toMatch(/\/platform-api\/errors\/unknown-subscription$/);
    }
  });

  it("ends a revoked key's event streams on every gateway within a second, with a last comment", async () => {
    const { key, token } = await admin.createToken({
      orgId: acmeOrgId,
      name: "stream-revoke-it",
      scopes: ["webhooks:read"],
    });
    const streams = await Promise.all([ports.gatewayA, ports.gatewayB].map((p) => openStream(p, key)));
    await admin.revokeToken({ tokenId: token?.id ?? "" });
    const revokedAt = Date.now();
    for (const s of streams) {
      await s.ended;
      // The heartbeat (which also rechecks the key) is 15 s: only the revocation event ends it this soon.
      expect(s.endedAt - revokedAt).toBeLessThan(1_000);
      expect(s.text.endsWith(": access revoked; the stream ends\n\n")).toBe(true);
    }
  });

  it("records a partner's delegated request in identity's audit log through Kafka", async () => {
    const keys = await admin.listSandboxKeys({});
    const partner = keys.keys.find((k) => k.name === "northwind-partner")?.key ?? "";
    const orgs = await admin.listOrganizations({});
    const globex = orgs.organizations.find((o) => o.name === "Globex")?.id ?? "";
    const res = await get(ports.gatewayA, partner, { "X-Platform-Acting-On": globex });
    expect(res.status).toBe(200);
    const requestId = res.headers.get("x-request-id");
    const entry = await eventually(
      "the audit entry",
      async () => (await admin.listDelegationAudit({ orgId: globex })).entries.find((e) => e.requestId === requestId),
      60_000,
    );
    expect(entry).toMatchObject({ method: "GET", path: "/api/v1alpha1/organizations/me", status: 200 });
  });

  it("makes a user invited through the gateway a host in scheduling's database, through Kafka", async () => {
    const keys = await admin.listSandboxKeys({});
    const full = keys.keys.find((k) => k.name === "acme-full")?.key ?? "";
    const res = await fetch(`http://127.0.0.1:${ports.gatewayA}/api/v1alpha1/users`, {
      method: "POST",
      headers: {
        "X-Platform-Api-Key": full,
        "Content-Type": "application/json",
        "Idempotency-Key": `hosts-it-${run}`,
      },
      body: JSON.stringify({
        email: `kafka.host.${run}@acme.example`,
        role: "User",
        firstName: "Kafka",
        lastName: "Host",
      }),
    });
    expect(res.status).toBe(201);
    const user = (await res.json()) as { id: string };
    const client = new pg.Client({ connectionString: stack!.databaseUrl("sched") });
    await client.connect();
    try {
      const host = await eventually(
        "the invited user in scheduling.hosts",
        async () =>
          (
            await client.query(
              "SELECT org_id, email, display_name, time_zone, working_hours FROM scheduling.hosts WHERE user_id = $1",
              [user.id],
            )
          ).rows[0],
        60_000,
      );
      expect(host).toEqual({
        org_id: acmeOrgId,
        email: `kafka.host.${run}@acme.example`,
        display_name: "Kafka Host",
        time_zone: "UTC",
        working_hours: [1, 2, 3, 4, 5].map((weekday) => ({ weekday, start: "09:00", end: "17:00" })),
      });
    } finally {
      await client.end();
    }
  });

  it("books a meeting across processes, publishes scheduling.smartscheduler.booked to Kafka, and crm-data puts it on the contact's and account's timelines", async () => {
    const kafka = new Kafka({
      brokers: KAFKA_BROKERS.split(","),
      clientId: `it-sched-${run}`,
      logLevel: logLevel.NOTHING,
    });
    const consumer = kafka.consumer({ groupId: `it-sched-${run}` });
    const booked: string[] = [];
    await consumer.connect();
    await consumer.subscribe({ topic: TOPICS.scheduling, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        if (String(message.headers?.ce_type ?? "") === "scheduling.smartscheduler.booked") {
          booked.push(String(message.value));
        }
      },
    });
    try {
      const key = (await admin.listSandboxKeys({})).keys.find((k) => k.name === "acme-full")?.key ?? "";
      const api = (path: string, init: RequestInit = {}) =>
        fetch(`http://127.0.0.1:${ports.gatewayB}/api/v1alpha1${path}`, {
          ...init,
          headers: { "X-Platform-Api-Key": key, "Content-Type": "application/json", ...(init.headers ?? {}) },
        });
      const schedules = (await (await api("/smart-schedules?name=intro")).json()) as { items: { id: string }[] };
      const scheduleId = schedules.items[0]?.id ?? "";
      const detail = (await (await api(`/smart-schedules/${scheduleId}`)).json()) as {
        matchingForm: { fields: { key: string; options: string[] }[] };
        surveyQuestions: { label: string; required: boolean }[];
      };
      const region = detail.matchingForm.fields.find((f) => f.key === "region");
      const formValues = { region: region?.options[0] };
      const availability = (await (
        await api(`/smart-schedules/${scheduleId}/availability`, {
          method: "POST",
          body: JSON.stringify({ formValues }),
        })
      ).json()) as { hostGroups: { slots: { slotToken: string }[] }[][] };
      const slot = availability.hostGroups.flat().flatMap((h) => h.slots)[0];
      const surveyResponses = Object.fromEntries(
        detail.surveyQuestions.filter((q) => q.required).map((q) => [q.label, "Pricing"]),
      );
      const res = await api("/scheduled-meetings", {
        method: "POST",
        headers: { "Idempotency-Key": `it-${run}` },
        body: JSON.stringify({
          slotToken: slot?.slotToken,
          // A contact of crm-data's sandbox (its email in another case), so the projection through
          // Kafka puts the meeting on her timeline and her account's.
          attendee: { firstName: "Ada", lastName: "Lovelace", email: "Ada.Lovelace@analytical.example" },
          formValues,
          surveyResponses,
        }),
      });
      expect(res.status).toBe(201);
      const meeting = (await res.json()) as { id: string };
      await eventually(
        "the booked event on Kafka",
        () => (booked.some((v) => v.includes(meeting.id)) ? true : undefined),
        60_000,
      );

      const seed = `it-${run}`;
      for (const timeline of [
        `/contacts/${sandboxContactId(seed, "ada-lovelace")}/activity?type=meeting`,
        `/accounts/${sandboxAccountId(seed, "analytical")}/activity?type=meeting`,
      ]) {
        const item = await eventually(
          `the meeting on ${timeline}`,
          async () => {
            const page = (await (await api(timeline)).json()) as {
              items: { type: string; reference: { id?: string } }[];
            };
            return page.items.find((i) => i.reference.id === meeting.id);
          },
          60_000,
          250,
        );
        expect(item).toMatchObject({ type: "meeting", reference: { id: meeting.id, title: expect.any(String) } });
      }
    } finally {
      await consumer.disconnect();
    }
  });

  it("holds the read limit across two gateway processes sharing Redis", async () => {
    const { key } = await admin.createToken({ orgId: acmeOrgId, name: "limit-it", scopes: ["organizations:read"] });
    const statuses: number[] = [];
    for (let batch = 0; batch < 30; batch++) {
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => get(i % 2 === 0 ? ports.gatewayA : ports.gatewayB, key)),
      );
      statuses.push(...results.map((r) => r.status));
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(300);
    for (const p of [ports.gatewayA, ports.gatewayB]) {
      const over = await get(p, key);
      expect(over.status).toBe(429);
      const retryAfter = Number(over.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      const body = (await over.json()) as { type: string; status: number };
      expect(body.type).toMatch(/\/platform-api\/errors\/rate-limit-exceeded$/);
      expect(body.status).toBe(429);
    }
  });
});
