import { analyticsMigrations, build as buildAnalytics } from "@platform/analytics/server";
import { EmailEventKind } from "@platform/contracts/events/email";
import { ManualClock } from "@platform/kit/clock";
import { adminSecretInterceptor, errorInterceptor, type RunningServer, serveConnect } from "@platform/kit/connect";
import { type Db, openPglite, pgliteDb } from "@platform/kit/db";
import { createLogger } from "@platform/kit/logger";
import { kitMigrations, migrate } from "@platform/kit/migrate";
import { sandboxOrgId } from "@platform/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run } from "../src/cli.js";
import { type GenerateOptions, generatedBlasts, generateEmailEvents, sendersOf } from "../src/generate.js";

const SEED = "cli-generate-test";
const SECRET = "cli-generate-test-admin-secret";
const NOW = new Date("2026-03-10T12:00:00Z");
const logger = createLogger("cli-generate-test", "silent");

let pglite: Awaited<ReturnType<typeof openPglite>>;
let server: RunningServer;
let db: Db;

beforeAll(async () => {
  pglite = await openPglite();
  db = pgliteDb(pglite, "analytics");
  await migrate(db, [kitMigrations, analyticsMigrations]);
  const { adminRoutes } = buildAnalytics({
    db,
    clock: new ManualClock(NOW),
    logger,
    cursorSecret: "cli-generate-cursor",
  });
  server = await serveConnect({
    routes: adminRoutes,
    interceptors: [errorInterceptor(logger), adminSecretInterceptor(SECRET)],
    port: 0,
    host: "127.0.0.1",
  });
});
afterAll(async () => {
  await server?.close();
  await pglite?.close();
});

async function platform(argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await run(argv, {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    env: { PLATFORM_ADMIN_URL: `http://127.0.0.1:${server.port}`, PLATFORM_ADMIN_SECRET: SECRET, SANDBOX_SEED: SEED },
    now: () => NOW,
  });
  return { code, stdout, stderr, json: () => JSON.parse(stdout) };
}

const options = (over: Partial<GenerateOptions> = {}): GenerateOptions => ({
  orgId: sandboxOrgId(SEED, "acme"),
  emails: 4_000,
  days: 30,
  blasts: 4,
  seed: "unit",
  now: NOW,
  senders: sendersOf(sandboxOrgId(SEED, "acme"), SEED),
  ...over,
});

describe("the email activity generator", () => {
  it("makes a plausible mix, in the period, the same for the same seed", () => {
    const events = [...generateEmailEvents(options())];
    const count = (kind: EmailEventKind, auto = false) =>
      events.filter((e) => e.kind === kind && (kind !== EmailEventKind.REPLY || e.autoReply === auto)).length;
    const sends = count(EmailEventKind.SEND);
    expect(sends + count(EmailEventKind.SEND_FAILED)).toBe(4_000);
    expect(count(EmailEventKind.SEND_FAILED) / 4_000).toBeLessThan(0.03);
    expect(count(EmailEventKind.BOUNCE) / sends).toBeGreaterThan(0.005);
    expect(count(EmailEventKind.BOUNCE) / sends).toBeLessThan(0.04);
    expect(count(EmailEventKind.OPEN) / sends).toBeGreaterThan(0.8);
    expect(count(EmailEventKind.CLICK) / sends).toBeGreaterThan(0.05);
    expect(count(EmailEventKind.REPLY) / sends).toBeGreaterThan(0.02);
    expect(count(EmailEventKind.REPLY, true) / sends).toBeGreaterThan(0.01);
    const start = NOW.getTime() - 30 * 86_400_000;
    for (const e of events) {
      const at = Number(e.occurredAt?.seconds) * 1000;
      expect(at).toBeGreaterThanOrEqual(start);
      expect(at).toBeLessThanOrEqual(NOW.getTime());
    }
    expect(events.filter((e) => e.blastId !== "").length / events.length).toBeGreaterThan(0.15);
    expect(new Set(events.map((e) => e.eventId)).size).toBe(events.length);
    const again = [...generateEmailEvents(options())];
    expect(again.map((e) => e.eventId)).toEqual(events.map((e) => e.eventId));
    expect(again[100]).toEqual(events[100]);
    expect([...generateEmailEvents(options({ maxEvents: 123 }))]).toHaveLength(123);
  });

  it("describes its blasts with the recipient counts it generated", () => {
    const counts: number[] = [];
    const events = [...generateEmailEvents(options(), counts)];
    const blasts = generatedBlasts(options(), counts);
    expect(blasts).toHaveLength(4);
    for (const [k, b] of blasts.entries()) {
      const emails = new Set(events.filter((e) => e.blastId === b.blastId).map((e) => e.messageId));
      expect(Number(b.recipientCount)).toBe(emails.size);
      expect(b.status).toBe(k === 3 ? "Sending" : "Sent");
    }
  });
});

describe("platform sandbox generate", () => {
  it("ingests through the admin plane in batches, and a rerun with the same seed adds nothing", async () => {
    const first = await platform([
      "sandbox",
      "generate",
      "--emails",
      "500",
      "--blasts",
      "3",
      "--batch",
      "200",
      "--json",
    ]);
    expect(first.code, first.stderr).toBe(0);
    const summary = first.json();
    expect(summary).toMatchObject({ orgId: sandboxOrgId(SEED, "acme"), blasts: 3, duplicates: 0 });
    expect(summary.recorded).toBe(summary.events);
    expect(first.stderr).toContain(`${summary.events.toLocaleString("en-US")} events ingested`);
    const [emails] = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM analytics.sent_emails");
    expect(emails?.n).toBe(500);
    const [blasts] = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM analytics.blasts WHERE described_at IS NOT NULL",
    );
    expect(blasts?.n).toBe(3);

    const again = await platform(["sandbox", "generate", "--emails", "500", "--blasts", "3", "--json"]);
    expect(again.json()).toMatchObject({ events: summary.events, recorded: 0, duplicates: summary.events });
  });

  it("explains itself and rejects bad options", async () => {
    const help = await platform(["sandbox", "generate", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--emails <n>");
    expect(help.stdout).toContain("Rates:");
    const bad = await platform(["sandbox", "generate", "--emails", "many"]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("--emails");
    const badOrg = await platform(["sandbox", "generate", "--emails", "5", "--org", "acme"]);
    expect(badOrg.code).not.toBe(0);
    expect(badOrg.stderr).toContain("org_");
  });
});
