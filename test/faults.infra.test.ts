import { createClient } from "@connectrpc/connect";
import { IdentityAdminService } from "@platform/contracts/identity";
import { adminClientInterceptor, httpTransport } from "@platform/kit/connect";
import { eventually } from "@platform/kit/testing";
import { sandboxAccountId, sandboxOrgId } from "@platform/sandbox";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { basePort, KAFKA_BROKERS, PG_URL, runId, type Stack, sleep, startStack } from "./support/processes.js";

// The distributed runtime under the faults production brings: every service (and the
// webhook delivery worker) as its own process on its own database, the gateway in front.
// 1. Every 0.2 s for 60 rounds, every connection the services hold is terminated
//    (pg_terminate_backend) while writes and reads run through the gateway.
// 2. A service frozen with SIGSTOP: its routes answer 504 at their deadline, others do not notice.
// Uses KAFKA_BROKERS (its own broker when other stacks share the machine's: consumer groups are fixed names).
const run = runId();
const seed = `faults-${run}`;
const adminSecret = "faults-admin-secret-0123456789";
const contextSecret = "faults-context-secret-0123456789";
const base = Number(process.env.FAULTS_BASE_PORT ?? basePort(0));
const ports = {
  identity: base,
  identityAdmin: base + 1,
  scheduling: base + 2,
  crm: base + 3,
  crmAdmin: base + 4,
  revenue: base + 5,
  revenueAdmin: base + 6,
  analytics: base + 7,
  analyticsAdmin: base + 8,
  webhooks: base + 9,
  delivery: base + 10,
  gateway: base + 11,
};
const services = ["identity", "scheduling", "crm", "revenue", "analytics", "webhooks"] as const;
const url = (p: number) => `http://127.0.0.1:${p}`;
// Deadlines the loaded test machine meets with room to spare, short enough to wait for.
const READ_DEADLINE_MS = 6_000;
const WRITE_DEADLINE_MS = 8_000;

let stack: Stack | undefined;
const admin = createClient(
  IdentityAdminService,
  httpTransport(url(ports.identityAdmin), [adminClientInterceptor(adminSecret)]),
);
const account = sandboxAccountId(seed, "analytical");
const keys: string[] = [];

function api(method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) {
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

const START_TIMEOUT_MS = 240_000;

beforeAll(async () => {
  const service = { KAFKA_BROKERS, SANDBOX_SEED: seed };
  stack = await startStack({
    name: "platform_faults",
    run,
    env: { PLATFORM_CONTEXT_SECRET: contextSecret },
    parallel: true,
    timeoutMs: START_TIMEOUT_MS,
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
        env: { ...service, PORT: String(ports.webhooks) },
      },
      {
        name: "webhooks-delivery",
        entry: "services/webhooks/src/delivery-main.ts",
        database: "webhooks",
        port: ports.delivery,
        env: {
          ...service,
          DELIVERY_PORT: String(ports.delivery),
          WEBHOOKS_CONSUMER_GROUP: `faults-delivery-${run}`,
          WEBHOOKS_POLL_MS: "100",
        },
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
          UPSTREAM_READ_TIMEOUT_MS: String(READ_DEADLINE_MS),
          UPSTREAM_WRITE_TIMEOUT_MS: String(WRITE_DEADLINE_MS),
          // Resolved keys are cached briefly, so identity's database is asked during the faults too.
          TOKEN_CACHE_TTL_MS: "500",
        },
      },
    ],
  });
  // Several tokens: the write tier allows 20 writes a minute per token.
  const acme = sandboxOrgId(seed, "acme");
  // Each role has tokens of its own, so no token nears its per-minute limit however fast the
  // machine answers: writers 0–20 (three each), readers 21–22, read-backs 23–26, the write
  // after the faults 27, the frozen-service test 28–30.
  for (let i = 0; i < 31; i++) {
    const { key } = await admin.createToken({
      orgId: acme,
      name: `faults-${i}`,
      scopes: ["deals:read", "deals:write", "organizations:read"],
    });
    keys.push(key);
  }
  // The read-through to crm-data and identity is warm before the faults start.
  await eventually(
    "a first deal",
    async () => {
      const res = await api("POST", "/deals", keys[0]!, deal("warm-up"), { "idempotency-key": `warm-${run}` });
      return res.status === 201 ? true : undefined;
    },
    60_000,
  );
}, 400_000);

afterAll(() => stack?.stop());

function deal(name: string) {
  return { name, accountId: account, stage: "Discovery" };
}

const procs = () => stack?.processes ?? [];
const dead = () =>
  procs()
    .filter((p) => p.proc.exitCode !== null || p.proc.signalCode !== null)
    .map((p) => p.name);
/** The last lines of the processes that exited, for the failure message. */
const lastWords = () =>
  procs()
    .filter((p) => p.proc.exitCode !== null || p.proc.signalCode !== null)
    .map((p) => `${p.name} (${p.proc.exitCode ?? p.proc.signalCode}):\n${p.output().slice(-3000)}`)
    .join("\n\n");

describe("database connections terminated under load", () => {
  it("60 rounds of pg_terminate_backend every 0.2 s: no process exits, no acknowledged write is lost, only 503s, full service after", async () => {
    const killer = new pg.Client({ connectionString: `${PG_URL}/postgres` });
    await killer.connect();
    const statuses = new Map<number, number>();
    const acknowledged = new Map<string, string>(); // idempotency key -> deal id
    const unanswered = new Map<string, string>(); // idempotency key -> API key, for writes answered 503
    let writing = true;
    let terminated = 0;
    const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);

    // Seven writers, three tokens each (under the per-token write limit); every write has its
    // own Idempotency-Key and a 503 is retried with the same key, as the API tells clients to.
    const writer = async (w: number) => {
      let n = 0;
      while (writing) {
        const key = `w${w}-${n++}-${run}`;
        const token = keys[w * 3 + (n % 3)]!;
        const res = await api("POST", "/deals", token, deal(key), { "idempotency-key": key });
        count(res.status);
        if (res.status === 201) acknowledged.set(key, ((await res.json()) as { id: string }).id);
        else {
          await res.arrayBuffer();
          unanswered.set(key, token);
        }
        await sleep(700);
      }
    };
    const reader = async (r: number) => {
      while (writing) {
        const res = await api("GET", "/deals?limit=5", keys[21 + r]!);
        count(res.status);
        await res.arrayBuffer();
        await sleep(100);
      }
    };
    const load = [...Array.from({ length: 7 }, (_, w) => writer(w)), reader(0), reader(1)];

    for (let round = 0; round < 60; round++) {
      const killed = await killer.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = ANY($1) AND pid <> pg_backend_pid()`,
        [services.map((s) => stack!.database(s))],
      );
      terminated += killed.rowCount ?? 0;
      await sleep(200);
    }
    const lastRound = Date.now();
    writing = false;
    await Promise.all(load);
    await killer.end();

    expect(dead(), lastWords()).toEqual([]);
    expect(terminated).toBeGreaterThan(60);
    // Only successes and the retryable 503 of requests whose connection died under them.
    expect([...statuses.keys()].filter((s) => s !== 200 && s !== 201 && s !== 503)).toEqual([]);
    // Load that met the faults: writes acknowledged while connections were dying, and 503s.
    const total = [...statuses.values()].reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(40);
    expect(acknowledged.size).toBeGreaterThan(0);
    expect(statuses.get(503) ?? 0).toBeGreaterThan(0);

    // Full service within seconds of the last round: a new write and a read.
    await eventually(
      "a write after the faults",
      async () => {
        const res = await api("POST", "/deals", keys[27]!, deal(`after-${run}`), { "idempotency-key": `after-${run}` });
        return res.status === 201 ? true : undefined;
      },
      15_000,
      // Once a second: every try counts against the token's 20 writes a minute.
      1_000,
    );
    expect(Date.now() - lastRound).toBeLessThan(15_000);

    // Every acknowledged write is there; every write that got a 503 is safe to retry with its key.
    let readBacks = 0;
    for (const [key, id] of acknowledged) {
      const res = await api("GET", `/deals/${id}`, keys[23 + (readBacks++ % 4)]!);
      expect(res.status, key).toBe(200);
      await res.arrayBuffer();
    }
    // (a 503'd write may have committed before its connection died: the retry then replays it).
    for (const [key, token] of [...unanswered].slice(0, 10)) {
      const res = await api("POST", "/deals", token, deal(key), { "idempotency-key": key });
      expect(res.status, key).toBe(201);
      await res.arrayBuffer();
    }

    // The outbox relay reconnected by itself: everything written is published.
    const revenue = new pg.Client({ connectionString: stack!.databaseUrl("revenue") });
    await revenue.connect();
    try {
      // Never two deals for one Idempotency-Key, whatever the faults did to the first attempt.
      const { rows: twice } = await revenue.query(
        "SELECT name FROM revenue.deals WHERE name LIKE $1 GROUP BY name HAVING count(*) > 1",
        [`%-${run}`],
      );
      expect(twice).toEqual([]);
      await eventually(
        "the revenue outbox to drain",
        async () => {
          const { rows } = await revenue.query(
            "SELECT count(*)::int AS n FROM revenue.outbox WHERE published_at IS NULL",
          );
          return rows[0].n === 0 ? true : undefined;
        },
        30_000,
      );
    } finally {
      await revenue.end();
    }
    expect(dead(), lastWords()).toEqual([]);
  }, 180_000);
});

describe("a service frozen by SIGSTOP", () => {
  it("answers its routes 504 upstream-timeout at their deadline, other routes normally; a timed-out write retried with its key is applied once", async () => {
    const revenue = stack!.get("revenue");
    const key = `frozen-${run}`;
    revenue.proc.kill("SIGSTOP");
    try {
      const started = Date.now();
      const timed = async (p: Promise<Response>) => {
        const res = await p;
        const body = await res.text();
        return { status: res.status, body, ms: Date.now() - started, type: res.headers.get("content-type") };
      };
      const [read, write, other] = await Promise.all([
        timed(api("GET", "/deals", keys[28]!)),
        timed(api("POST", "/deals", keys[29]!, deal(key), { "idempotency-key": key })),
        timed(api("GET", "/organizations/me", keys[30]!)),
      ]);
      expect(other.status).toBe(200);
      expect(other.ms).toBeLessThan(READ_DEADLINE_MS);
      for (const [res, deadline] of [
        [read, READ_DEADLINE_MS],
        [write, WRITE_DEADLINE_MS],
      ] as const) {
        expect(res.status).toBe(504);
        expect(res.type).toMatch(/^application\/problem\+json/);
        expect(JSON.parse(res.body).type).toMatch(/\/platform-api\/errors\/upstream-timeout$/);
        expect(res.ms).toBeGreaterThanOrEqual(deadline - 100);
        expect(res.ms).toBeLessThan(deadline + 5_000);
      }
    } finally {
      revenue.proc.kill("SIGCONT");
    }
    // The retry with the same key: created now (the frozen call was rolled back past its
    // deadline) or the replay of it; never a second deal.
    const retry = await eventually(
      "the retried write",
      async () => {
        const res = await api("POST", "/deals", keys[29]!, deal(key), { "idempotency-key": key });
        return res.status === 201 ? ((await res.json()) as { id: string }) : undefined;
      },
      30_000,
      2_000,
    );
    const again = await api("POST", "/deals", keys[29]!, deal(key), { "idempotency-key": key });
    expect(again.status).toBe(201);
    expect(((await again.json()) as { id: string }).id).toBe(retry.id);
    const db = new pg.Client({ connectionString: stack!.databaseUrl("revenue") });
    await db.connect();
    try {
      const { rows } = await db.query("SELECT count(*)::int AS n FROM revenue.deals WHERE name = $1", [key]);
      expect(rows[0].n).toBe(1);
    } finally {
      await db.end();
    }
    expect(dead(), lastWords()).toEqual([]);
  }, 120_000);
});
