import { randomUUID } from "node:crypto";
import { context, propagation } from "@opentelemetry/api";
import type { BusMessage, ConsumedMessage } from "./bus.js";
import type { Queryable } from "./db.js";
import type { EventEnvelope } from "./events.js";

/** An event to publish once the caller's transaction commits. */
export interface OutboxEvent {
  topic: string;
  /** Partition key, usually the org id: one key's events are published in order. */
  key: string;
  type: string;
  source: string;
  subject?: string;
  /** JSON-serialisable payload (the proto message's `toJson` form). */
  data: unknown;
  /** When it happened; defaults to the database's transaction time. */
  time?: Date;
}

const SCHEMA_NAME = /^[a-z][a-z0-9_]{0,62}$/;

/** The relays of this process, by schema: woken when a transaction that wrote outbox rows commits. */
const relaysBySchema = new Map<string, Set<() => void>>();
/** Transactions that already wake the relays when they commit (one wake per transaction). */
const waking = new WeakSet<Queryable>();

/**
 * Calls `wake` each time a transaction of this process commits outbox rows of `schema`
 * (written with `enqueueEvent`). Returns the function that stops it.
 *
 * This replaces a NOTIFY at commit (kit migration 004 says why): a relay learns of its own
 * process's rows at once, and of other processes' rows (another replica's) at its next poll,
 * unless that replica's relay publishes them first.
 */
export function onOutboxCommit(schema: string, wake: () => void): () => void {
  let relays = relaysBySchema.get(schema);
  if (!relays) {
    relays = new Set();
    relaysBySchema.set(schema, relays);
  }
  relays.add(wake);
  return () => {
    relays.delete(wake);
  };
}

function wakeRelays(schema: string): void {
  for (const wake of relaysBySchema.get(schema) ?? []) wake();
}

/**
 * Writes one outbox row with the caller's queryable, so the event commits or rolls back
 * with the state change it describes. The active trace context rides along, so the
 * consumer's work joins the trace of the request that caused it. Returns the event id.
 */
export async function enqueueEvent(q: Queryable, schema: string, e: OutboxEvent): Promise<string> {
  // The schema is interpolated into SQL, so it must be a plain identifier.
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid schema name '${schema}'`);
  const id = randomUUID();
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  // Deferred: it goes to Postgres with the transaction's next statement or before its COMMIT,
  // in the same round trip as the other deferred writes (the idempotency record).
  q.defer(
    `INSERT INTO ${schema}.outbox (id, topic, key, type, source, subject, time, traceparent, data)
     VALUES ($1, $2, $3, $4, $5, $6, COALESCE($7::timestamptz, now()), $8, $9::jsonb)`,
    [
      id,
      e.topic,
      e.key,
      e.type,
      e.source,
      e.subject ?? null,
      e.time ?? null,
      carrier.traceparent ?? null,
      JSON.stringify(e.data ?? null),
    ],
  );
  if (q.afterCommit && !waking.has(q)) {
    waking.add(q);
    q.afterCommit(() => wakeRelays(schema));
  }
  return id;
}

const CONTENT_TYPE = "application/json";

/** CloudEvents 1.0 Kafka protocol binding, binary mode: attributes as `ce_*` headers, data as the value. */
export function toBusMessage(envelope: EventEnvelope, key: string): BusMessage {
  const headers: Record<string, string> = {
    ce_specversion: "1.0",
    ce_id: envelope.id,
    ce_type: envelope.type,
    ce_source: envelope.source,
    ce_time: envelope.time,
    "content-type": CONTENT_TYPE,
  };
  if (envelope.subject !== undefined) headers.ce_subject = envelope.subject;
  if (envelope.traceparent !== undefined) headers.traceparent = envelope.traceparent;
  return { key, value: Buffer.from(JSON.stringify(envelope.data ?? null)), headers };
}

/** Reads a consumed message back into an envelope; a message that is not a CloudEvent throws. */
export function decodeEvent(m: ConsumedMessage): EventEnvelope {
  const h = m.headers;
  const { ce_id: id, ce_type: type, ce_source: source, ce_time: time } = h;
  if (h.ce_specversion !== "1.0" || !id || !type || !source || !time) {
    throw new Error(`not a CloudEvents 1.0 message: ${m.topic}/${m.partition}@${m.offset}`);
  }
  const text = m.value.toString("utf8");
  return {
    id,
    type,
    source,
    time,
    ...(h.ce_subject !== undefined ? { subject: h.ce_subject } : {}),
    ...(h.traceparent !== undefined ? { traceparent: h.traceparent } : {}),
    data: text === "" ? null : JSON.parse(text),
  };
}
