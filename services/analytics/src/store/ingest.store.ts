import type { Queryable } from "@platform/kit/db";
import { type BatchPlan, deliveryKey, deliveryKeys, planBatch } from "../domain/batch.js";
import { type Delivery, sentEmailId } from "../domain/delivery.js";
import type { EmailEvent } from "../domain/email-event.js";
import { takeOrgTurns } from "./org-turns.js";
import { toDelivery } from "./rows.js";
import { columnArrays } from "./unnest.js";

// Ingestion as set-based SQL: a batch of any size costs about ten statements, each writing
// one table from arrays (unnest), so a million events load in minutes and the rollups are
// always in the transaction of the raw events they summarise.

export interface IngestResult {
  recorded: number;
  duplicates: number;
}

/** Records the events not recorded before and updates every rollup, inside the caller's transaction. */
export async function ingestEvents(q: Queryable, events: readonly EmailEvent[]): Promise<IngestResult> {
  const unique = new Map<string, EmailEvent>();
  for (const e of events) if (!unique.has(e.eventId)) unique.set(e.eventId, e);
  const candidates = [...unique.values()];
  if (candidates.length === 0) return { recorded: 0, duplicates: events.length };
  await takeOrgTurns(
    q,
    candidates.map((e) => e.orgId),
  );

  const inserted = await q.query<{ event_id: string }>(
    `INSERT INTO analytics.email_events (event_id, org_id, kind, occurred_at, message_id, recipient_email, auto_reply)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::text[], $7::boolean[])
     ON CONFLICT (event_id) DO NOTHING RETURNING event_id`,
    columnArrays(candidates, ["eventId", "orgId", "kind", "occurredAt", "messageId", "recipientEmail", "autoReply"]),
  );
  const fresh = new Set(inserted.map((r) => r.event_id));
  const batch = candidates.filter((e) => fresh.has(e.eventId));
  if (batch.length > 0) {
    const before = await ensureDeliveries(q, batch);
    await writePlan(q, planBatch(batch, before));
  }
  return { recorded: batch.length, duplicates: events.length - batch.length };
}

/**
 * The deliveries the batch touches as they are now; missing ones (and their sent email) are
 * created first. A new sent email takes its subject, sender and blast from its earliest event
 * and has no sentAt until one of its deliveries goes out (writePlan).
 */
async function ensureDeliveries(q: Queryable, batch: readonly EmailEvent[]): Promise<Map<string, Delivery>> {
  const firstOf = new Map<string, EmailEvent>();
  for (const e of batch) {
    const id = sentEmailId(e.orgId, e.messageId);
    const seen = firstOf.get(id);
    if (!seen || e.occurredAt < seen.occurredAt) firstOf.set(id, e);
  }
  const emails = [...firstOf.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
  await q.query(
    `INSERT INTO analytics.sent_emails (id, org_id, message_id, subject, sender_user_id, sender_display_name, blast_id)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
     ON CONFLICT (id) DO NOTHING`,
    [
      emails.map(([id]) => id),
      emails.map(([, e]) => e.orgId),
      emails.map(([, e]) => e.messageId),
      emails.map(([, e]) => e.subject),
      emails.map(([, e]) => e.senderUserId),
      emails.map(([, e]) => e.senderDisplayName),
      emails.map(([, e]) => e.blastId),
    ],
  );
  const keys = deliveryKeys(batch).sort((a, b) =>
    deliveryKey(a.sentEmailId, a.recipientEmail) < deliveryKey(b.sentEmailId, b.recipientEmail) ? -1 : 1,
  );
  const emailOf = new Map(emails);
  await q.query(
    `INSERT INTO analytics.deliveries (sent_email_id, recipient_email, org_id, blast_id)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])
     ON CONFLICT DO NOTHING`,
    [
      keys.map((k) => k.sentEmailId),
      keys.map((k) => k.recipientEmail),
      keys.map((k) => emailOf.get(k.sentEmailId)?.orgId ?? ""),
      keys.map((k) => emailOf.get(k.sentEmailId)?.blastId ?? null),
    ],
  );
  const rows = await q.query(
    `SELECT d.* FROM analytics.deliveries d
       JOIN unnest($1::text[], $2::text[]) AS k(sent_email_id, recipient_email)
         ON d.sent_email_id = k.sent_email_id AND d.recipient_email = k.recipient_email`,
    [keys.map((k) => k.sentEmailId), keys.map((k) => k.recipientEmail)],
  );
  const before = new Map<string, Delivery>();
  for (const r of rows) {
    const d = toDelivery(r);
    before.set(deliveryKey(d.sentEmailId, d.recipientEmail), d);
  }
  return before;
}

async function writePlan(q: Queryable, plan: BatchPlan): Promise<void> {
  const s = plan.sentEmails;
  // Counters add up and times keep their max, so the order batches commit in does not matter.
  await q.query(
    `UPDATE analytics.sent_emails e SET
        opens = e.opens + c.opens, clicks = e.clicks + c.clicks, replies = e.replies + c.replies,
        last_open_location = CASE WHEN c.last_open_at IS NOT NULL AND (e.last_open_at IS NULL OR c.last_open_at >= e.last_open_at)
                                  THEN c.last_open_location ELSE e.last_open_location END,
        last_open_at = GREATEST(e.last_open_at, c.last_open_at),
        last_click_at = GREATEST(e.last_click_at, c.last_click_at),
        last_reply_at = GREATEST(e.last_reply_at, c.last_reply_at)
       FROM unnest($1::text[], $2::int[], $3::int[], $4::int[], $5::timestamptz[], $6::text[],
                   $7::timestamptz[], $8::timestamptz[])
         AS c(id, opens, clicks, replies, last_open_at, last_open_location, last_click_at, last_reply_at)
      WHERE e.id = c.id`,
    columnArrays(s, [
      "id",
      "opens",
      "clicks",
      "replies",
      "lastOpenAt",
      "lastOpenLocation",
      "lastClickAt",
      "lastReplyAt",
    ]),
  );

  const d = plan.deliveries;
  await q.query(
    `UPDATE analytics.deliveries t SET
        sent_at = c.sent_at, bounced = c.bounced, send_failed = c.send_failed,
        opens = c.opens, clicks = c.clicks, replies = c.replies, auto_replies = c.auto_replies,
        last_open_at = c.last_open_at, last_click_at = c.last_click_at, last_reply_at = c.last_reply_at,
        last_open_location = c.last_open_location
       FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::boolean[], $5::boolean[], $6::int[], $7::int[],
                   $8::int[], $9::int[], $10::timestamptz[], $11::timestamptz[], $12::timestamptz[], $13::text[])
         AS c(sent_email_id, recipient_email, sent_at, bounced, send_failed, opens, clicks, replies, auto_replies,
              last_open_at, last_click_at, last_reply_at, last_open_location)
      WHERE t.sent_email_id = c.sent_email_id AND t.recipient_email = c.recipient_email`,
    columnArrays(d, [
      "sentEmailId",
      "recipientEmail",
      "sentAt",
      "bounced",
      "sendFailed",
      "opens",
      "clicks",
      "replies",
      "autoReplies",
      "lastOpenAt",
      "lastClickAt",
      "lastReplyAt",
      "lastOpenLocation",
    ]),
  );
  if (plan.sendTimes.length > 0) {
    // From the deliveries just written, not by LEAST: a SEND_FAILED arriving after the SEND
    // must be able to take the time back (and the email out of the sent-email list).
    await q.query(
      `UPDATE analytics.sent_emails e SET sent_at = (
          SELECT min(d.sent_at) FROM analytics.deliveries d WHERE d.sent_email_id = e.id AND NOT d.send_failed)
        WHERE e.id = ANY($1::text[])`,
      [plan.sendTimes],
    );
  }

  const r = plan.recipients;
  await q.query(
    `INSERT INTO analytics.recipients AS t (org_id, recipient_email, last_sent_at, last_open_at, last_click_at, last_reply_at)
     SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::timestamptz[], $6::timestamptz[])
     ON CONFLICT (org_id, recipient_email) DO UPDATE SET
        last_sent_at = GREATEST(t.last_sent_at, excluded.last_sent_at),
        last_open_at = GREATEST(t.last_open_at, excluded.last_open_at),
        last_click_at = GREATEST(t.last_click_at, excluded.last_click_at),
        last_reply_at = GREATEST(t.last_reply_at, excluded.last_reply_at)`,
    columnArrays(r, ["orgId", "recipientEmail", "lastSentAt", "lastOpenAt", "lastClickAt", "lastReplyAt"]),
  );
  if (plan.retracted.length > 0) {
    // A bounce can take away a recipient's latest successful send: the one before it counts again.
    await q.query(
      `UPDATE analytics.recipients t SET last_sent_at = (
          SELECT max(d.sent_at) FROM analytics.deliveries d
           WHERE d.org_id = t.org_id AND d.recipient_email = t.recipient_email
             AND d.sent_at IS NOT NULL AND NOT d.bounced AND NOT d.send_failed)
         FROM unnest($1::text[], $2::text[]) AS k(org_id, recipient_email)
        WHERE t.org_id = k.org_id AND t.recipient_email = k.recipient_email`,
      [plan.retracted.map((x) => x.orgId), plan.retracted.map((x) => x.recipientEmail)],
    );
  }

  await addActivity(
    q,
    "daily_activity",
    ["org_id"],
    plan.orgActivity.map((a) => ({ ...a, keys: [a.orgId] })),
  );
  // A blast's activity is its org's: the blast id alone would let another org's events count.
  await addActivity(
    q,
    "blast_daily_activity",
    ["org_id", "blast_id"],
    plan.blastActivity.map((a) => ({ ...a, keys: [a.orgId, a.blastId] })),
  );

  const b = plan.blasts;
  if (b.length > 0) {
    await q.query(
      `INSERT INTO analytics.blasts (org_id, id) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT DO NOTHING`,
      [b.map((x) => x.orgId), b.map((x) => x.blastId)],
    );
    await q.query(
      `UPDATE analytics.blasts t SET
          successful_sent = t.successful_sent + c.successful_sent,
          unique_opens = t.unique_opens + c.unique_opens,
          unique_clicks = t.unique_clicks + c.unique_clicks,
          unique_replies = t.unique_replies + c.unique_replies,
          total_opens = t.total_opens + c.total_opens,
          total_clicks = t.total_clicks + c.total_clicks,
          total_replies = t.total_replies + c.total_replies
         FROM unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::int[], $6::int[], $7::int[], $8::int[],
                     $9::int[])
           AS c(org_id, id, successful_sent, unique_opens, unique_clicks, unique_replies, total_opens, total_clicks,
                total_replies)
        WHERE t.org_id = c.org_id AND t.id = c.id`,
      columnArrays(b, [
        "orgId",
        "blastId",
        "successfulSent",
        "uniqueOpens",
        "uniqueClicks",
        "uniqueReplies",
        "totalOpens",
        "totalClicks",
        "totalReplies",
      ]),
    );
  }
}

/**
 * Adds activity deltas to `table`, whose rows are keyed by `keyColumns`, day and action.
 * Deltas may be negative (a bounce takes back a send). Postgres checks an INSERT's proposed
 * row before ON CONFLICT turns it into an update, so the rows are created at zero first and
 * the deltas applied by UPDATE: the CHECKs then judge the sums.
 */
async function addActivity(
  q: Queryable,
  table: "daily_activity" | "blast_daily_activity",
  keyColumns: readonly string[],
  changes: readonly { keys: readonly string[]; day: string; action: string; delta: number }[],
): Promise<void> {
  if (changes.length === 0) return;
  const n = keyColumns.length;
  const values = [
    ...keyColumns.map((_, i) => changes.map((c) => c.keys[i])),
    changes.map((c) => c.day),
    changes.map((c) => c.action),
    changes.map((c) => c.delta),
  ];
  const keys = keyColumns.map((_, i) => `k${i}`);
  const from = `unnest(${[...keyColumns.map((_, i) => `$${i + 1}::text[]`), `$${n + 1}::date[]`, `$${n + 2}::text[]`, `$${n + 3}::int[]`].join(", ")})
       AS c(${[...keys, "day", "action", "delta"].join(", ")})`;
  await q.query(
    `INSERT INTO analytics.${table} (${keyColumns.join(", ")}, day, action, count)
     SELECT ${keys.join(", ")}, day, action, 0 FROM ${from}
     ON CONFLICT DO NOTHING`,
    values,
  );
  await q.query(
    `UPDATE analytics.${table} t SET count = t.count + c.delta
       FROM ${from}
      WHERE ${keyColumns.map((col, i) => `t.${col} = c.${keys[i]}`).join(" AND ")} AND t.day = c.day AND t.action = c.action`,
    values,
  );
}

/** The email-sending system's events, folded into sent emails, deliveries, blasts and the rollups. */
export interface IngestStore {
  /** Records a batch of events once each (by event id), in the caller's transaction. */
  ingestEvents(events: readonly EmailEvent[]): Promise<IngestResult>;
}

export function ingestStore(q: Queryable): IngestStore {
  return { ingestEvents: (events) => ingestEvents(q, events) };
}
