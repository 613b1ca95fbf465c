import { createClient } from "@connectrpc/connect";
import { IdentityAdminService } from "@platform/contracts/identity";
import { adminClientInterceptor, httpTransport } from "@platform/kit/connect";
import { TOPICS } from "@platform/kit/events";
import { Kafka, logLevel } from "kafkajs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { basePort, KAFKA_BROKERS, runId, STACK_START_TIMEOUT_MS, type Stack, startStack } from "./support/processes.js";

// Issue 52, item 5, on the distributed runtime: the gateway publishes its request summaries in
// batches on Kafka (platform.requestlogs.v1), the request-logs process stores them in its own
// database's day partitions, and a request made with one key is found by its requestId
// within 5 s, with nothing sensitive in it; another org's is a 404 like an unknown id.
const run = runId();
const adminSecret = "it-admin-secret-0123456789";
const contextSecret = "it-context-secret-0123456789";
const port = basePort(9);
const group = `request-logs-it-${run}`;
const ports = { identity: port, admin: port + 1, requestLogs: port + 2, gateway: port + 3 };

let stack: Stack | undefined;
const admin = createClient(
  IdentityAdminService,
  httpTransport(`http://127.0.0.1:${ports.admin}`, [adminClientInterceptor(adminSecret)]),
);
const keys: Record<string, { key: string; tokenId: string; orgId: string }> = {};

const api = (path: string, key: string, headers: Record<string, string> = {}) =>
  fetch(`http://127.0.0.1:${ports.gateway}/api/v1alpha1${path}`, {
    headers: { "X-Platform-Api-Key": key, ...headers },
  });

/**
 * Points the test's new consumer group at the end of the topic as it is now. The group reads
 * from the beginning (as a new deployment's does), and the shared broker keeps what earlier runs,
 * benches and stacks published there: tens of thousands of batches that are not this test's,
 * which it would otherwise work through before the one it waits for.
 */
async function startGroupAtTheEnd(groupId: string): Promise<void> {
  const admin = new Kafka({
    brokers: KAFKA_BROKERS.split(","),
    clientId: `rl-it-${run}`,
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  try {
    if (!(await admin.listTopics()).includes(TOPICS.requestLogs)) return;
    const offsets = await admin.fetchTopicOffsets(TOPICS.requestLogs);
    await admin.setOffsets({
      groupId,
      topic: TOPICS.requestLogs,
      partitions: offsets.map((p) => ({ partition: p.partition, offset: p.high })),
    });
  } finally {
    await admin.disconnect();
  }
}

beforeAll(async () => {
  const service = { SANDBOX_SEED: `it-${run}` };
  await startGroupAtTheEnd(group);
  stack = await startStack({
    name: "platform_rl",
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
        name: "request-logs",
        entry: "services/request-logs/src/main.ts",
        database: "request_logs",
        port: ports.requestLogs,
        // Its own group: every stack on this broker stores what it sees, none takes another's share.
        env: { ...service, PORT: String(ports.requestLogs), REQUEST_LOGS_CONSUMER_GROUP: group },
      },
      {
        name: "gateway",
        entry: "gateway/src/main.ts",
        port: ports.gateway,
        env: {
          PORT: String(ports.gateway),
          HOST: "127.0.0.1",
          IDENTITY_URL: `http://127.0.0.1:${ports.identity}`,
          REQUEST_LOGS_URL: `http://127.0.0.1:${ports.requestLogs}`,
        },
      },
    ],
  });
  const orgs = await admin.listOrganizations({});
  for (const name of ["Acme Corp", "Umbrella"]) {
    const orgId = orgs.organizations.find((o) => o.name === name)?.id ?? "";
    expect(orgId, name).toMatch(/^org_/);
    const created = await admin.createToken({
      orgId,
      name: `rl-it-${run}`,
      scopes: ["organizations:read", "logs:read"],
    });
    keys[name] = { key: created.key, tokenId: created.token?.id ?? "", orgId };
  }
}, STACK_START_TIMEOUT_MS);

afterAll(async () => {
  await stack?.stop();
});

describe("the request log through Kafka", () => {
  it("finds a request made with one key by its requestId within 5 s, with nothing sensitive in it", async () => {
    const acme = keys["Acme Corp"]!;
    const requestId = `rl-it-${run}-1`;
    const res = await api("/organizations/me", acme.key, {
      "X-Request-Id": requestId,
      Authorization: "Bearer s3cr3t-header-value",
    });
    expect(res.status).toBe(200);

    let record: Record<string, unknown> = {};
    await vi.waitFor(
      async () => {
        const found = await api(`/request-logs/${requestId}`, acme.key);
        expect(found.status).toBe(200);
        record = (await found.json()) as Record<string, unknown>;
      },
      { timeout: 5_000, interval: 100 },
    );
    expect(record).toMatchObject({
      requestId,
      method: "GET",
      route: "/organizations/me",
      status: 200,
      problemType: null,
      keyId: acme.tokenId,
      orgId: acme.orgId,
      actingOn: null,
    });
    const text = JSON.stringify(record);
    expect(text).not.toContain(acme.key);
    expect(text).not.toContain("s3cr3t-header-value");

    // Another org's requestId answers as an unknown one does.
    const umbrella = keys.Umbrella!;
    const other = await api(`/request-logs/${requestId}`, umbrella.key);
    const unknown = await api(`/request-logs/rl-it-${run}-never`, umbrella.key);
    for (const r of [other, unknown]) {
      expect(r.status).toBe(404);
      expect(((await r.json()) as { type: string }).type).toMatch(/\/request-log-not-found$/);
    }
  });

  it("stores each request once, in the day partition of its time, in request-logs' own database", async () => {
    const db = new pg.Client({ connectionString: stack!.databaseUrl("request_logs") });
    await db.connect();
    try {
      const { rows: parts } = await db.query(
        `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
          WHERE i.inhparent = 'request_logs.request_logs'::regclass`,
      );
      const today = new Date().toISOString().slice(0, 10).replaceAll("-", "");
      expect(parts.map((p) => p.relname)).toContain(`request_logs_${today}`);
      const { rows } = await db.query(
        "SELECT count(*)::int AS n FROM request_logs.request_logs WHERE request_id = $1",
        [`rl-it-${run}-1`],
      );
      expect(rows[0].n).toBe(1);
    } finally {
      await db.end();
    }
  });
});
