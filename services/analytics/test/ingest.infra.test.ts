import { randomBytes } from "node:crypto";
import { create, toJson } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { EmailEventKind, type EmailEventRecorded, EmailEventRecordedSchema } from "@platform/contracts/events/email";
import type { Subscription } from "@platform/kit/bus";
import { type Db, openPg } from "@platform/kit/db";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import { newId } from "@platform/kit/ids";
import { KafkaBus } from "@platform/kit/kafka-bus";
import { createLogger } from "@platform/kit/logger";
import { kitMigrations, migrate } from "@platform/kit/migrate";
import { toBusMessage } from "@platform/kit/outbox";
import { eventually } from "@platform/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emailEventOf } from "../src/domain/email-event.js";
import { startAnalyticsConsumers } from "../src/events/subscriptions.js";
import { analyticsMigrations } from "../src/server.js";
import { blastStore } from "../src/store/blast.store.js";
import { ingestEvents } from "../src/store/ingest.store.js";

// The Kafka path on real infrastructure: EmailEventRecorded envelopes published twice on
// platform.email.v1 are counted once; and concurrent admin batches overlapping on the same
// deliveries, on a real Postgres, count every event exactly once, each org's toward its own
// blast even when two orgs name the same blast id.
const ADMIN_URL = process.env.POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const BROKERS = (process.env.KAFKA_BROKERS ?? "127.0.0.1:19092").split(",");
const database = `analytics_it_${randomBytes(4).toString("hex")}`;
const logger = createLogger("analytics-ingest-it", process.env.IT_LOG ?? "silent");

let admin: Db;
let db: Db;
let bus: KafkaBus;
let consumers: Subscription[] = [];
const run = randomBytes(4).toString("hex");

function ev(orgId: string, kind: keyof typeof EmailEventKind, to: string, at: string, n: number, extra = {}) {
  return create(EmailEventRecordedSchema, {
    eventId: `it-${run}-${orgId}-${n}`,
    orgId,
    kind: EmailEventKind[kind],
    occurredAt: timestampFromDate(new Date(at)),
    messageId: `msg-${run}`,
    recipientEmail: to,
    subject: "Infra test",
    senderUserId: newId("usr_"),
    senderDisplayName: "Infra",
    ...extra,
  });
}

/** A small story: 2 sends, one bounced; 3 opens; 1 human and 1 auto reply. */
function story(orgId: string): EmailEventRecorded[] {
  let n = 0;
  return [
    ev(orgId, "SEND", "a@it.example", "2026-03-01T09:00:00Z", n++),
    ev(orgId, "SEND", "b@it.example", "2026-03-01T09:00:00Z", n++),
    ev(orgId, "BOUNCE", "b@it.example", "2026-03-01T09:01:00Z", n++),
    ev(orgId, "OPEN", "a@it.example", "2026-03-01T10:00:00Z", n++, { location: "Oslo, NO" }),
    ev(orgId, "OPEN", "a@it.example", "2026-03-02T10:00:00Z", n++),
    ev(orgId, "OPEN", "a@it.example", "2026-03-02T11:00:00Z", n++),
    ev(orgId, "REPLY", "a@it.example", "2026-03-02T12:00:00Z", n++),
    ev(orgId, "REPLY", "a@it.example", "2026-03-01T09:02:00Z", n++, { autoReply: true }),
  ];
}

async function rollups(orgId: string) {
  const [email] = await db.query(
    "SELECT opens, replies, last_open_location FROM analytics.sent_emails WHERE org_id = $1",
    [orgId],
  );
  const activity = await db.query(
    `SELECT to_char(day, 'YYYY-MM-DD') AS day, action, count FROM analytics.daily_activity
      WHERE org_id = $1 AND count > 0 ORDER BY day, action`,
    [orgId],
  );
  const recipients = await db.query(
    // A recipient whose only send bounced may have no row or one without a send: both count as not sent.
    "SELECT recipient_email FROM analytics.recipients WHERE org_id = $1 AND last_sent_at IS NOT NULL ORDER BY 1",
    [orgId],
  );
  const [events] = await db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM analytics.email_events WHERE org_id = $1",
    [orgId],
  );
  return { email, activity, recipients, events: events?.n };
}

const EXPECTED = {
  email: { opens: 3, replies: 1, last_open_location: null },
  activity: [
    { day: "2026-03-01", action: "opens", count: 1 },
    { day: "2026-03-01", action: "sends", count: 1 },
    { day: "2026-03-02", action: "opens", count: 2 },
    { day: "2026-03-02", action: "replies", count: 1 },
  ],
  recipients: [{ recipient_email: "a@it.example" }],
  events: 8,
};

beforeAll(async () => {
  admin = openPg({ url: ADMIN_URL, schema: "public", max: 1 });
  await admin.exec(`CREATE DATABASE ${database}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  db = openPg({ url: url.toString(), schema: "analytics", max: 8 });
  await migrate(db, [kitMigrations, analyticsMigrations]);
  bus = new KafkaBus({ brokers: BROKERS, clientId: `analytics-it-${run}`, logger });
  consumers = await startAnalyticsConsumers({ db, bus, logger });
});
afterAll(async () => {
  for (const c of consumers) await c.close();
  await bus?.close();
  await db?.close();
  await admin?.exec(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin?.close();
});

describe("email event ingestion on Postgres and Kafka", () => {
  it("counts EmailEventRecorded envelopes published twice once", async () => {
    const orgId = newId("org_");
    const messages = story(orgId).map((e) =>
      toBusMessage(
        {
          id: e.eventId,
          type: EVENT_TYPES.emailEventRecorded,
          source: "email-sender",
          time: new Date().toISOString(),
          data: toJson(EmailEventRecordedSchema, e),
        },
        orgId,
      ),
    );
    await bus.publish(TOPICS.email, messages);
    await bus.publish(TOPICS.email, messages);
    // A marker after both rounds: once it is recorded, every message before it on the partition was handled.
    const marker = ev(orgId, "SEND", "marker@it.example", "2026-03-03T09:00:00Z", 99, { messageId: `marker-${run}` });
    await bus.publish(TOPICS.email, [
      toBusMessage(
        {
          id: marker.eventId,
          type: EVENT_TYPES.emailEventRecorded,
          source: "email-sender",
          time: new Date().toISOString(),
          data: toJson(EmailEventRecordedSchema, marker),
        },
        orgId,
      ),
    ]);
    await eventually(
      "the marker event",
      async () => ((await rollups(orgId)).events === 9 ? true : undefined),
      60_000,
      100,
    );
    const after = await rollups(orgId);
    expect(after.events).toBe(9);
    expect(after.email).toEqual({ opens: 3, replies: 1, last_open_location: null });
    expect(after.activity).toEqual([...EXPECTED.activity, { day: "2026-03-03", action: "sends", count: 1 }]);
    expect(after.recipients).toEqual([...EXPECTED.recipients, { recipient_email: "marker@it.example" }]);
  });

  it("counts overlapping admin batches running concurrently exactly once, without deadlocks", async () => {
    // Several rounds, because opposite orders only collide when the transactions interleave.
    for (let round = 0; round < 8; round++) {
      const orgId = newId("org_");
      const events = story(orgId).map((e) => emailEventOf(e));
      const reversed = [...events].reverse();
      const batches = [events, reversed, events.slice(2), reversed.slice(1), events.slice(0, 5), events.slice(3)];
      const results = await Promise.all(batches.map((b) => db.tx((q) => ingestEvents(q, b))));
      expect(results.reduce((sum, r) => sum + r.recorded, 0)).toBe(events.length);
      expect(await rollups(orgId)).toEqual(EXPECTED);
    }
  });

  it("keeps two orgs' events naming one blast id apart under concurrent batches; one org describes it", async () => {
    const blastId = newId("blast_");
    const orgs = [newId("org_"), newId("org_")];
    const batches = orgs.flatMap((orgId) => {
      const events = story(orgId).map((e) => emailEventOf(create(EmailEventRecordedSchema, { ...e, blastId })));
      const reversed = [...events].reverse();
      return [events, reversed, events.slice(2), reversed.slice(1), events.slice(0, 5)];
    });
    await Promise.all(batches.map((b) => db.tx((q) => ingestEvents(q, b))));
    for (const orgId of orgs) {
      expect(await rollups(orgId)).toEqual(EXPECTED);
      // a sent, opened 3 times and replied; b bounced.
      const blasts = await db.query(
        `SELECT successful_sent, unique_opens, unique_replies, total_opens, total_replies FROM analytics.blasts
          WHERE org_id = $1 AND id = $2`,
        [orgId, blastId],
      );
      expect(blasts).toEqual([
        { successful_sent: 1, unique_opens: 1, unique_replies: 1, total_opens: 3, total_replies: 1 },
      ]);
      const activity = await db.query(
        `SELECT to_char(day, 'YYYY-MM-DD') AS day, action, count FROM analytics.blast_daily_activity
          WHERE org_id = $1 AND blast_id = $2 AND count > 0 ORDER BY day, action`,
        [orgId, blastId],
      );
      expect(activity).toEqual(EXPECTED.activity);
    }

    // Both describe the id at once: their org turns do not serialise them, the id's uniqueness does.
    const metadata = (orgId: string) => ({
      id: blastId,
      orgId,
      name: "Contested",
      templateName: "t",
      subject: "s",
      ownerUserId: newId("usr_"),
      ownerDisplayName: "o",
      status: "Sending" as const,
      sentAt: null,
      recipientCount: 2,
    });
    const now = new Date();
    const results = await Promise.allSettled(
      orgs.map((orgId) => db.tx((q) => blastStore(q).upsertBlasts([metadata(orgId)], now))),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const refused = results.find((r) => r.status === "rejected");
    expect(String(refused?.reason)).toMatch(/another organization/);
    const described = await db.query(
      "SELECT count(*)::int AS n FROM analytics.blasts WHERE id = $1 AND name IS NOT NULL",
      [blastId],
    );
    expect(described).toEqual([{ n: 1 }]);
  });
});
