import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { type Db, openPglite, pgliteDb } from "@platform/kit/db";
import { seededId } from "@platform/kit/ids";
import { kitMigrations, migrate } from "@platform/kit/migrate";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ACTIONS, sentEmailId } from "../src/domain/delivery.js";
import type { EmailEvent } from "../src/domain/email-event.js";
import type { BlastMetadata } from "../src/domain/model.js";
import { analyticsMigrations } from "../src/server.js";
import { BLAST_SORT_KEYS, blastStore } from "../src/store/blast.store.js";
import { txStore } from "../src/store/index.js";
import { ingestEvents } from "../src/store/ingest.store.js";
import { DELIVERY_SORT_KEYS, SENT_EMAIL_SORT_KEYS } from "../src/store/sent-email.store.js";
import { emailEvent } from "./builders.js";

// The store on PGlite: what ingestion writes, read back the way the handlers read it.
const ACME = seededId("org_", "store-test", "acme");
const UMBRELLA = seededId("org_", "store-test", "umbrella");
const USR = seededId("usr_", "store-test", "usr");
const B1 = seededId("blast_", "store-test", "b1");
const B2 = seededId("blast_", "store-test", "b2");
const NOW = new Date("2026-03-10T12:00:00Z");
const SINCE = new Date("2026-02-09T00:00:00Z");

const ev = (
  orgId: string,
  messageId: string,
  kind: EmailEvent["kind"],
  to: string,
  at: string,
  extra: Partial<EmailEvent> = {},
): EmailEvent => emailEvent({ orgId, messageId, kind, recipientEmail: to, at, senderUserId: USR, ...extra });

const blast = (orgId: string, id: string, name: string): BlastMetadata => ({
  id,
  orgId,
  name,
  templateName: "Template",
  subject: name,
  ownerUserId: USR,
  ownerDisplayName: "Owner",
  status: "Sent",
  sentAt: new Date("2026-03-08T09:00:00Z"),
  recipientCount: 2,
});

// Umbrella's blast B1: r1 sent, opened, replied; r2 bounced.
const UMBRELLA_B1 = [
  ev(UMBRELLA, "u-b1", "send", "r1@u.example", "2026-03-08T09:00:00Z", { blastId: B1 }),
  ev(UMBRELLA, "u-b1", "open", "r1@u.example", "2026-03-08T10:00:00Z", { blastId: B1 }),
  ev(UMBRELLA, "u-b1", "reply", "r1@u.example", "2026-03-09T11:00:00Z", { blastId: B1 }),
  ev(UMBRELLA, "u-b1", "send", "r2@u.example", "2026-03-08T09:00:00Z", { blastId: B1 }),
  ev(UMBRELLA, "u-b1", "bounce", "r2@u.example", "2026-03-08T09:01:00Z", { blastId: B1 }),
];
// Acme's events naming Umbrella's B1: two sends, an open, a click and a reply that must not count for Umbrella.
const ACME_B1 = [
  ev(ACME, "a-b1", "send", "x1@a.example", "2026-03-08T08:00:00Z", { blastId: B1 }),
  ev(ACME, "a-b1", "open", "x1@a.example", "2026-03-08T08:30:00Z", { blastId: B1 }),
  ev(ACME, "a-b1", "click", "x1@a.example", "2026-03-08T08:40:00Z", { blastId: B1 }),
  ev(ACME, "a-b1", "reply", "x1@a.example", "2026-03-09T09:00:00Z", { blastId: B1 }),
  ev(ACME, "a-b1", "send", "x2@a.example", "2026-03-08T08:00:00Z", { blastId: B1 }),
];
// Acme's events naming B2 before Umbrella, its owner, described it; then Umbrella's own.
const ACME_B2 = [
  ev(ACME, "a-b2", "send", "x3@a.example", "2026-03-07T08:00:00Z", { blastId: B2 }),
  ev(ACME, "a-b2", "open", "x3@a.example", "2026-03-07T08:30:00Z", { blastId: B2 }),
];
const UMBRELLA_B2 = [
  ev(UMBRELLA, "u-b2", "send", "r3@u.example", "2026-03-08T09:00:00Z", { blastId: B2 }),
  ev(UMBRELLA, "u-b2", "send", "r8@u.example", "2026-03-08T09:00:00Z", { blastId: B2 }),
  ev(UMBRELLA, "u-b2", "click", "r3@u.example", "2026-03-08T09:30:00Z", { blastId: B2 }),
];
// Umbrella's plain emails: one that only failed before sending; one whose open is stamped
// before its send; one whose every delivery bounced; one whose send a later batch's
// pre-send failure takes back.
const NEVER_SENT = [ev(UMBRELLA, "u-failed", "send_failed", "r4@u.example", "2026-03-09T09:00:00Z")];
const OPEN_FIRST = [
  ev(UMBRELLA, "u-open-first", "open", "r5@u.example", "2026-03-09T08:00:00Z"),
  ev(UMBRELLA, "u-open-first", "send", "r5@u.example", "2026-03-09T09:00:00Z"),
];
const BOUNCED = [
  ev(UMBRELLA, "u-bounced", "bounce", "r6@u.example", "2026-03-09T09:05:00Z"),
  ev(UMBRELLA, "u-bounced", "send", "r6@u.example", "2026-03-09T09:00:00Z"),
];
const LATE_FAILURE_SEND = ev(UMBRELLA, "u-late-failure", "send", "r7@u.example", "2026-03-09T07:00:00Z");
const LATE_FAILURE = ev(UMBRELLA, "u-late-failure", "send_failed", "r7@u.example", "2026-03-09T07:00:01Z");
const ALL = [
  ...UMBRELLA_B1,
  ...ACME_B1,
  ...ACME_B2,
  ...UMBRELLA_B2,
  ...NEVER_SENT,
  ...OPEN_FIRST,
  ...BOUNCED,
  LATE_FAILURE_SEND,
  LATE_FAILURE,
];

const COUNTERS = [
  "successful_sent",
  "unique_opens",
  "unique_clicks",
  "unique_replies",
  "total_opens",
  "total_clicks",
  "total_replies",
];

const TABLES = [
  "email_events",
  "sent_emails",
  "deliveries",
  "recipient_days",
  "recipients",
  "daily_activity",
  "blast_daily_activity",
  "blasts",
] as const;

let pglite: PGlite;
let db: Db;
const ingest = (events: readonly EmailEvent[], into = db) => into.tx((q) => ingestEvents(q, events));
const describeBlasts = (blasts: BlastMetadata[]) => db.tx((q) => blastStore(q).upsertBlasts(blasts, NOW));
const reads = () => txStore(db);

/**
 * Every rollup row, comparable across runs: no recording time, no activity row at zero and
 * no recipient without any time (which of those exist depends on how the batches fell).
 */
async function dump(from: Db) {
  const out: Record<string, unknown[]> = {};
  for (const table of TABLES) {
    const rows = await from.query<{ j: Record<string, unknown> }>(
      `SELECT to_jsonb(t) - 'recorded_at' AS j FROM analytics.${table} t ORDER BY (to_jsonb(t) - 'recorded_at')::text`,
    );
    out[table] = rows
      .map((r) => r.j)
      .filter((j) => j.count !== 0)
      .filter(
        (j) =>
          table !== "recipients" ||
          [j.last_sent_at, j.last_open_at, j.last_click_at, j.last_reply_at].some((v) => v !== null),
      );
  }
  return out;
}

async function blastView(orgId: string, id: string) {
  const r = reads();
  const filter = { since: SINCE, ownerUserId: "" };
  return {
    blast: await r.findBlast(orgId, id),
    activity: await r.blastActivity(orgId, id, SINCE, ACTIONS),
    recipients: (
      await r.listDeliveries(
        { blastId: id, orgId },
        { sort: { key: DELIVERY_SORT_KEYS.sentAt!, descending: false }, limit: 100, hasReplied: undefined, search: "" },
      )
    ).map((k) => k.item),
    totals: await r.blastTotals(orgId, filter),
    top: await r.topBlasts(orgId, filter, 20),
    list: (
      await r.listBlasts(
        orgId,
        { ...filter, search: "" },
        { sort: { key: BLAST_SORT_KEYS.sentAt!, descending: true }, limit: 100 },
      )
    ).map((k) => k.item),
  };
}

async function sentEmails(orgId: string) {
  const page = await reads().listSentEmails(orgId, {
    sort: { key: SENT_EMAIL_SORT_KEYS.sentAt!, descending: true },
    limit: 100,
    since: SINCE,
    search: "",
    emailType: "all",
  });
  return page.map((k) => ({ subject: k.item.subject, sentAt: k.item.sentAt.toISOString() }));
}

beforeAll(async () => {
  pglite = await openPglite();
  db = pgliteDb(pglite, "analytics");
  await migrate(db, [kitMigrations, analyticsMigrations]);
});
afterAll(() => pglite?.close());
beforeEach(async () => {
  await db.exec(`TRUNCATE ${TABLES.map((t) => `analytics.${t}`).join(", ")}`);
});

describe("blasts are their org's", () => {
  it("another org's events naming my blast change none of my blast's figures", async () => {
    await describeBlasts([blast(UMBRELLA, B1, "March newsletter")]);
    await ingest(UMBRELLA_B1);
    const before = await blastView(UMBRELLA, B1);
    expect(before.blast).toMatchObject({ successfulSent: 1, uniqueOpens: 1, uniqueReplies: 1, totalOpens: 1 });
    expect(before.activity).toEqual([
      { date: "2026-03-08", action: "sends", count: 1 },
      { date: "2026-03-08", action: "opens", count: 1 },
      { date: "2026-03-09", action: "replies", count: 1 },
    ]);

    await ingest(ACME_B1);
    expect(await blastView(UMBRELLA, B1)).toEqual(before);
    // Acme's events count toward Acme's own B1, which Acme has not described: counted, not listed.
    expect(await reads().findBlast(ACME, B1)).toBeUndefined();
    const [acmes] = await db.query("SELECT successful_sent, total_clicks FROM analytics.blasts WHERE org_id = $1", [
      ACME,
    ]);
    expect(acmes).toEqual({ successful_sent: 2, total_clicks: 1 });
    // B1 is described by Umbrella: Acme cannot claim it.
    await expect(describeBlasts([blast(ACME, B1, "Not yours")])).rejects.toThrow(/another organization/);
    expect((await reads().findBlast(UMBRELLA, B1))?.name).toBe("March newsletter");
  });

  it("the owner describes a blast another org's events named first, and counts only its own", async () => {
    await ingest(ACME_B2);
    expect(await describeBlasts([blast(UMBRELLA, B2, "Spring promo")])).toBe(1);
    await ingest(UMBRELLA_B2);
    const view = await blastView(UMBRELLA, B2);
    expect(view.blast).toMatchObject({
      orgId: UMBRELLA,
      name: "Spring promo",
      successfulSent: 2,
      uniqueOpens: 0,
      uniqueClicks: 1,
      totalOpens: 0,
    });
    expect(view.recipients.map((d) => d.recipientEmail)).toEqual(["r3@u.example", "r8@u.example"]);
    expect(view.activity).toEqual([
      { date: "2026-03-08", action: "sends", count: 2 },
      { date: "2026-03-08", action: "clicks", count: 1 },
    ]);
    // Acme's B2 is Acme's own figures, not described: not found (404) and listed nowhere.
    const acme = await blastView(ACME, B2);
    expect(acme).toMatchObject({ blast: undefined, list: [], top: [] });
    expect(acme.recipients.map((d) => d.recipientEmail)).toEqual(["x3@a.example"]);
  });
});

describe("sent emails", () => {
  it("are the emails that went out, timed by their first send", async () => {
    await ingest([...NEVER_SENT, ...OPEN_FIRST, ...BOUNCED, LATE_FAILURE_SEND]);
    expect(await sentEmails(UMBRELLA)).toEqual([
      // The bounce came after the send: the email was sent, though not successfully.
      { subject: "Subject u-bounced", sentAt: "2026-03-09T09:00:00.000Z" },
      // Its open is stamped 08:00, before the send: the send's time all the same.
      { subject: "Subject u-open-first", sentAt: "2026-03-09T09:00:00.000Z" },
      { subject: "Subject u-late-failure", sentAt: "2026-03-09T07:00:00.000Z" },
    ]);
    expect(await reads().findSentEmail(UMBRELLA, sentEmailId(UMBRELLA, "u-failed"))).toBeUndefined();

    // A later batch says the send of u-late-failure failed before sending: it was never sent.
    await ingest([LATE_FAILURE]);
    expect((await sentEmails(UMBRELLA)).map((e) => e.subject)).toEqual(["Subject u-bounced", "Subject u-open-first"]);
    expect(await reads().findSentEmail(UMBRELLA, sentEmailId(UMBRELLA, "u-late-failure"))).toBeUndefined();
    expect((await reads().findSentEmail(UMBRELLA, sentEmailId(UMBRELLA, "u-open-first")))?.sentAt).toEqual(
      new Date("2026-03-09T09:00:00Z"),
    );
  });
});

describe("ingestion", () => {
  it("ends in the same rows whatever the order and split of the batches", async () => {
    await ingest(ALL);
    const whole = await dump(db);
    const runs = [
      [...ALL].reverse().map((e) => [e]),
      ALL.map((e) => [e]),
      [ALL.slice(12), ALL.slice(0, 5), ALL.slice(5, 12)],
      [ALL.filter((_, i) => i % 2 === 1), ALL.filter((_, i) => i % 2 === 0)],
    ];
    for (const batches of runs) {
      await db.exec(`TRUNCATE ${TABLES.map((t) => `analytics.${t}`).join(", ")}`);
      for (const batch of batches) await ingest(batch);
      expect(await dump(db)).toEqual(whole);
    }
  });
});

describe("migration 002", () => {
  it("repairs the blasts, blast activity and sent times 001 mixed up or made up", async () => {
    // What the fixed ingestion makes of the events (blast B1 described by Umbrella).
    await describeBlasts([blast(UMBRELLA, B1, "March newsletter")]);
    await ingest(ALL);
    const fixed = await dump(db);

    // The same events as 001 stored them: one blast row per id (the org whose row came
    // first, counters of every org), activity per blast id, sentAt at the earliest event.
    const dir = mkdtempSync(join(tmpdir(), "analytics-001-"));
    const old = await openPglite();
    try {
      cpSync(join(analyticsMigrations.dir, "001_analytics.sql"), join(dir, "001_analytics.sql"));
      const oldDb = pgliteDb(old, "analytics");
      await migrate(oldDb, [kitMigrations, { name: "analytics", dir }]);
      const copy = async (table: string, rows: unknown[]) =>
        oldDb.query(
          `INSERT INTO analytics.${table} SELECT * FROM jsonb_populate_recordset(NULL::analytics.${table}, $1::jsonb)`,
          [JSON.stringify(rows)],
        );
      await copy(
        "email_events",
        (fixed.email_events ?? []).map((e) => ({ ...(e as object), recorded_at: NOW.toISOString() })),
      );
      const earliest = new Map<string, string>();
      for (const e of ALL) {
        const id = sentEmailId(e.orgId, e.messageId);
        const at = e.occurredAt.toISOString();
        if (!earliest.has(id) || at < (earliest.get(id) ?? "")) earliest.set(id, at);
      }
      await copy(
        "sent_emails",
        (fixed.sent_emails as { id: string }[]).map((e) => ({ ...e, sent_at: earliest.get(e.id) })),
      );
      await copy("deliveries", fixed.deliveries ?? []);
      await copy("recipients", fixed.recipients ?? []);
      await copy("daily_activity", fixed.daily_activity ?? []);
      const mixed = new Map<string, Record<string, unknown>>();
      const rowsOf = new Map<string, Record<string, unknown>[]>();
      for (const b of fixed.blasts as Record<string, unknown>[]) {
        rowsOf.set(String(b.id), [...(rowsOf.get(String(b.id)) ?? []), b]);
      }
      for (const [id, rows] of rowsOf) {
        const owner = rows.find((b) => b.described_at !== null) ?? (rows[0] as Record<string, unknown>);
        const sum = (k: string) => rows.reduce((total, b) => total + Number(b[k]), 0);
        mixed.set(id, { ...owner, ...Object.fromEntries(COUNTERS.map((k) => [k, sum(k)])) });
      }
      await copy("blasts", [...mixed.values()]);
      const activity = new Map<string, Record<string, unknown>>();
      for (const a of fixed.blast_daily_activity as Record<string, unknown>[]) {
        const key = `${a.blast_id} ${a.day} ${a.action}`;
        const into = activity.get(key);
        if (into) into.count = Number(into.count) + Number(a.count);
        else activity.set(key, { blast_id: a.blast_id, day: a.day, action: a.action, count: a.count });
      }
      await copy("blast_daily_activity", [...activity.values()]);
      // The corruption the fix is about is there: Umbrella's B1 carries Acme's sends.
      const [before] = await oldDb.query("SELECT org_id, successful_sent FROM analytics.blasts WHERE id = $1", [B1]);
      expect(before).toEqual({ org_id: UMBRELLA, successful_sent: 3 });

      // Later migrations follow it; this test is about 002.
      expect(await migrate(oldDb, [kitMigrations, analyticsMigrations])).toContain(
        "analytics/002_org_scoped_blasts_and_first_send.sql",
      );
      expect(await dump(oldDb)).toEqual(fixed);
    } finally {
      await old.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
