import { randomBytes } from "node:crypto";
import { createClient } from "@connectrpc/connect";
import { IdentityAdminService } from "@platform/contracts/identity";
import { adminClientInterceptor, httpTransport } from "@platform/kit/connect";
import { eventually } from "@platform/kit/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { basePort, KAFKA_BROKERS, runId, STACK_START_TIMEOUT_MS, type Stack, startStack } from "./support/processes.js";

// A deal write needs only revenue's database: with crm-data and identity stopped, creates and
// updates that name accounts, contacts and users revenue has seen (through crm-data's events on
// Kafka, or one read-through) still succeed. An id revenue has never seen is still answered by
// its owner while the owner is up, with the spec's 404.
const run = runId();
const adminSecret = "it-admin-secret-0123456789";
const contextSecret = "it-context-secret-0123456789";
const port = basePort(5);
const ports = {
  identity: port,
  admin: port + 1,
  crm: port + 2,
  crmAdmin: port + 3,
  revenue: port + 4,
  revenueAdmin: port + 5,
  gateway: port + 6,
};
const common = { PLATFORM_CONTEXT_SECRET: contextSecret, PLATFORM_ADMIN_SECRET: adminSecret, KAFKA_BROKERS };

let stack: Stack | undefined;
let key = "";

const api = (path: string, init: { method?: string; body?: unknown; idempotencyKey?: string } = {}) =>
  fetch(`http://127.0.0.1:${ports.gateway}/api/v1alpha1${path}`, {
    method: init.method ?? "GET",
    headers: {
      "X-Platform-Api-Key": key,
      "Content-Type": "application/json",
      ...(init.idempotencyKey ? { "Idempotency-Key": init.idempotencyKey } : {}),
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });

const write = (method: "POST" | "PATCH", path: string, body: unknown) =>
  api(path, { method, body, idempotencyKey: `it-${randomBytes(6).toString("hex")}` });

async function json<T>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

beforeAll(async () => {
  stack = await startStack({
    name: "owners_it",
    run,
    env: common,
    processes: [
      {
        name: "identity",
        entry: "services/identity/src/main.ts",
        database: "id",
        port: ports.identity,
        env: { PORT: String(ports.identity), ADMIN_PORT: String(ports.admin), SANDBOX_SEED: `it-${run}` },
      },
      {
        name: "crm-data",
        entry: "services/crm-data/src/main.ts",
        database: "crm",
        port: ports.crm,
        env: { PORT: String(ports.crm), ADMIN_PORT: String(ports.crmAdmin), SANDBOX_SEED: `it-${run}` },
      },
      {
        name: "revenue",
        entry: "services/revenue/src/main.ts",
        database: "rev",
        port: ports.revenue,
        env: {
          PORT: String(ports.revenue),
          ADMIN_PORT: String(ports.revenueAdmin),
          CRM_URL: `http://127.0.0.1:${ports.crm}`,
          IDENTITY_URL: `http://127.0.0.1:${ports.identity}`,
          SANDBOX_SEED: `it-${run}`,
        },
      },
      {
        name: "gateway",
        entry: "gateway/src/main.ts",
        port: ports.gateway,
        env: {
          PORT: String(ports.gateway),
          HOST: "127.0.0.1",
          IDENTITY_URL: `http://127.0.0.1:${ports.identity}`,
          CRM_URL: `http://127.0.0.1:${ports.crm}`,
          REVENUE_URL: `http://127.0.0.1:${ports.revenue}`,
          // In-memory rate limits; the key stays cached while identity is down.
          TOKEN_CACHE_TTL_MS: "600000",
        },
      },
    ],
  });
  const admin = createClient(
    IdentityAdminService,
    httpTransport(`http://127.0.0.1:${ports.admin}`, [adminClientInterceptor(adminSecret)]),
  );
  key = (await admin.listSandboxKeys({})).keys.find((k) => k.name === "acme-full")?.key ?? "";
  expect(key).not.toBe("");
}, STACK_START_TIMEOUT_MS);

afterAll(() => stack?.stop());

describe("deal writes with crm-data and identity stopped", () => {
  it("create and update with known ids; unknown ids get the owner's 404 while it is up", async () => {
    // Ids as an integrator finds them, while everything runs.
    const contacts = await json<{ items: { id: string; account: { id: string } | null }[] }>(
      await api("/contacts?limit=100"),
    );
    const contact = contacts.items.find((c) => c.account);
    const contactId = contact?.id ?? "";
    const accountId = contact?.account?.id ?? "";
    const accounts = await json<{ items: { id: string }[] }>(await api("/accounts?limit=10"));
    const otherAccountId = accounts.items.find((a) => a.id !== accountId)?.id ?? "";
    const users = await json<{ items: { id: string }[] }>(await api("/users?limit=1"));
    const ownerId = users.items[0]?.id ?? "";
    const stage = (await json<{ items: { stage: string }[] }>(await api("/deals?limit=1"))).items[0]?.stage;
    expect({ accountId, otherAccountId, contactId, ownerId, stage }).toEqual({
      accountId: expect.stringMatching(/^acct_/),
      otherAccountId: expect.stringMatching(/^acct_/),
      contactId: expect.stringMatching(/^cont_/),
      ownerId: expect.stringMatching(/^usr_/),
      stage: expect.any(String),
    });

    // Unknown ids are answered by their owners, as the spec says.
    const unknown = async (body: Record<string, unknown>) =>
      json<{ type: string }>(await write("POST", "/deals", { name: "Unknown", accountId, stage, ...body }));
    expect((await unknown({ accountId: "acct_0000000000000000000000zz" })).type).toMatch(/account-not-found$/);
    expect((await unknown({ primaryContactId: "cont_0000000000000000000000zz" })).type).toMatch(/contact-not-found$/);
    expect((await unknown({ ownerId: "usr_0000000000000000000000zz" })).type).toMatch(/user-not-found$/);

    // crm-data's sandbox accounts reach revenue through its events on Kafka; users and the
    // default owner (the org's administrator) through one read-through each.
    const revenueDb = new pg.Client({ connectionString: stack!.databaseUrl("rev") });
    await revenueDb.connect();
    try {
      await eventually(
        "crm-data's accounts projected by revenue",
        async () =>
          (await revenueDb.query("SELECT 1 FROM revenue.account_refs WHERE id = $1", [otherAccountId])).rowCount
            ? true
            : undefined,
        60_000,
      );
    } finally {
      await revenueDb.end();
    }
    expect((await write("POST", "/deals", { name: "Warm-up", accountId, stage })).status).toBe(201);
    expect((await write("POST", "/deals", { name: "Warm-up", accountId, stage, ownerId })).status).toBe(201);

    await stack!.get("crm-data").stop();
    await stack!.get("identity").stop();

    const created = await write("POST", "/deals", {
      name: "Written while crm-data and identity are down",
      accountId: otherAccountId,
      primaryContactId: contactId,
      stage,
    });
    expect(created.status).toBe(201);
    const deal = await json<{ id: string; account: { id: string }; owner: { userId: string } }>(created);
    expect(deal.account.id).toBe(otherAccountId);

    const updated = await write("PATCH", `/deals/${deal.id}`, { accountId, ownerId, primaryContactId: contactId });
    expect(updated.status).toBe(200);
    expect(await json<{ account: { id: string }; owner: { userId: string } }>(updated)).toMatchObject({
      account: { id: accountId },
      owner: { userId: ownerId },
    });

    // An id revenue has never seen needs its owner: while it is down, a retryable 503.
    const stranger = await write("POST", "/deals", { name: "X", accountId: "acct_0000000000000000000000zz", stage });
    expect(stranger.status).toBe(503);

    // Back up, the owner answers unknown ids again.
    await stack!.restart("identity");
    expect((await unknown({ ownerId: "usr_0000000000000000000001zz" })).type).toMatch(/user-not-found$/);
  }, 240_000);
});
