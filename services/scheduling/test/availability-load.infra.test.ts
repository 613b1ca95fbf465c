import { randomBytes, randomUUID } from "node:crypto";
import { createServer } from "node:net";
import { createClient } from "@connectrpc/connect";
import { MeetingService, SmartScheduleService } from "@platform/contracts/scheduling";
import { systemClock } from "@platform/kit/clock";
import { httpTransport, signingInterceptor } from "@platform/kit/connect";
import type { RequestContext } from "@platform/kit/context";
import { type Db, openPg } from "@platform/kit/db";
import { newId } from "@platform/kit/ids";
import { Kafka, logLevel } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Started, sleep, startProcess } from "../../../test/support/processes.js";
import { NOTIFIER_GROUP } from "../src/events/subscriptions.js";
import { seedBenchSchedule } from "../src/sandbox.js";
import { formValues } from "./builders.js";

// Availability of a large round robin is seconds of CPU a minute under load. This runs it
// against a real scheduling process (its own Postgres database, a real Kafka broker) from
// several clients at once, books a meeting in the middle, and shows that the process keeps
// its other duties: the booking's notification goes out through Kafka and the notifier
// consumer stays the same member of its group (a missed session timeout would have evicted
// it and a restart would rejoin under a new member id), with no consumer warning from the
// Kafka client.

const ADMIN_URL = process.env.POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const BROKERS = process.env.KAFKA_BROKERS ?? "127.0.0.1:19092";
const CONTEXT_SECRET = "availability-load-context-secret-0123456789";
const database = `scheduling_load_${randomBytes(4).toString("hex")}`;
const LOAD_MS = 20_000;
const CLIENTS = 4;

let admin: Db;
let db: Db;
let scheduling: Started;
let port: number;
const orgId = newId("org_");
const kafka = new Kafka({
  clientId: "availability-load-test",
  brokers: BROKERS.split(","),
  logLevel: logLevel.NOTHING,
});
const kafkaAdmin = kafka.admin();

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

function client<S extends typeof SmartScheduleService | typeof MeetingService>(service: S, idempotencyKey?: string) {
  const ctx: RequestContext = {
    principal: "api",
    requestId: randomUUID(),
    orgId,
    tokenId: "tok_load",
    scopes: ["smart-scheduling:read", "smart-scheduling:write"],
    ...(idempotencyKey ? { idempotencyKey } : {}),
  };
  return createClient(
    service,
    httpTransport(`http://127.0.0.1:${port}`, [signingInterceptor(CONTEXT_SECRET, systemClock, () => ctx)]),
  );
}

/** The member ids of the notifier group's consumers, once the group is stable. */
async function notifierMembers(): Promise<string[]> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { groups } = await kafkaAdmin.describeGroups([NOTIFIER_GROUP]);
    const group = groups[0];
    const ours = group?.members.filter((m) => m.clientId === "scheduling").map((m) => m.memberId) ?? [];
    if (group?.state === "Stable" && ours.length > 0) return ours.sort();
    if (Date.now() > deadline) throw new Error(`notifier group not stable: ${JSON.stringify(group)}`);
    await sleep(500);
  }
}

/**
 * What the consumer side of the Kafka client warned about after `since` characters of the
 * process's output (pino JSON, level 40 and up): crashes, rebalances, heartbeat and session
 * trouble are logged by kafkajs' Consumer, ConsumerGroup and Runner. (A late broker answer to
 * the producer, "Response without match" from the RequestQueue, says the broker was slow on
 * this busy machine, not that the consumer stalled: the member ids below would show that.)
 */
function consumerWarnings(since: number): string[] {
  return scheduling
    .output()
    .slice(since)
    .split("\n")
    .filter(
      (line) =>
        line.includes('"component":"kafka"') &&
        /"level":(4|5|6)0/.test(line) &&
        /"namespace":"(Consumer|ConsumerGroup|Runner)"|crash|rebalanc|heartbeat|session/i.test(line),
    );
}

beforeAll(async () => {
  admin = openPg({ url: ADMIN_URL, schema: "public", max: 1 });
  await admin.exec(`CREATE DATABASE ${database}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  port = await freePort();
  scheduling = await startProcess(
    "scheduling",
    "services/scheduling/src/main.ts",
    {
      PORT: String(port),
      DATABASE_URL: url.toString(),
      KAFKA_BROKERS: BROKERS,
      PLATFORM_CONTEXT_SECRET: CONTEXT_SECRET,
      LOG_LEVEL: "info",
      SANDBOX_ENABLED: "false",
    },
    port,
  );
  db = openPg({ url: url.toString(), schema: "scheduling", max: 2 });
  await kafkaAdmin.connect();
}, 90_000);

afterAll(async () => {
  await scheduling?.stop();
  await kafkaAdmin.disconnect().catch(() => {});
  await db?.close();
  await admin?.exec(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin?.close();
});

describe("availability under load, on a real scheduling process with Kafka", () => {
  it("keeps the notifier consuming: the booking's notice goes out and the consumer is never evicted", async () => {
    const bench = await seedBenchSchedule(db, { orgId, hostCount: 20, clock: systemClock });
    const request = { scheduleId: bench.scheduleId, formValues: formValues(bench.formValues), compactSlots: true };
    // Once the group is stable: what the consumer logged while joining is not the load's doing.
    const before = await notifierMembers();
    const logMark = scheduling.output().length;

    // Whole-window availability of 20 hosts (about 12,000 slots) from several clients, back to back.
    let answers = 0;
    let slots = 0;
    const until = Date.now() + LOAD_MS;
    const load = Array.from({ length: CLIENTS }, async () => {
      const api = client(SmartScheduleService);
      while (Date.now() < until) {
        const res = await api.getAvailability(request);
        answers++;
        slots = res.hostGroups.flatMap((g) => g.hosts).reduce((n, h) => n + h.startMinutes.length, 0);
      }
    });

    // In the middle of it, a booking whose notices travel through the outbox, Kafka and the notifier.
    await sleep(3_000);
    const offer = await client(SmartScheduleService).getAvailability(request);
    const host = offer.hostGroups.flatMap((g) => g.hosts).find((h) => h.startMinutes.length > 0);
    if (!host) throw new Error("no slot offered");
    const { meeting } = await client(MeetingService, `load-${randomUUID()}`).bookMeeting({
      slotToken: host.slotTokens.slice(0, host.slotTokenLength),
      attendee: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", phone: "+14155550123" },
      formValues: formValues(bench.formValues),
    });
    const meetingId = meeting?.id ?? "";
    expect(meetingId).toMatch(/^mtg_/);
    const noticeDeadline = Date.now() + 30_000;
    while (!scheduling.output().includes(`"meetingId":"${meetingId}"`) && Date.now() < noticeDeadline) {
      await sleep(200);
    }
    const noticeSentDuringLoad = Date.now() < until;
    await Promise.all(load);

    const notices = scheduling
      .output()
      .split("\n")
      .filter((line) => line.includes(`"meetingId":"${meetingId}"`) && line.includes("meeting notice sent"));
    expect(notices.length).toBeGreaterThan(0);
    expect(noticeSentDuringLoad).toBe(true);
    expect(answers).toBeGreaterThan(CLIENTS);
    expect(slots).toBeGreaterThan(10_000);
    expect(await notifierMembers()).toEqual(before);
    const warnings = consumerWarnings(logMark);
    expect(warnings, warnings.join("\n")).toEqual([]);
  }, 120_000);
});
