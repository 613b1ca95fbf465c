import type { Queryable } from "@platform/kit/db";
import { type Keyed, keysetRows, type PageQuery, params, type SortKey } from "@platform/kit/keyset";
import type { AttemptRecord, AttemptStatus } from "../domain/model.js";
import type { StoredEvent } from "../domain/payload.js";
import { toAttempt } from "./rows.js";

/** The sort keys of GET /webhook-subscriptions/{id}/deliveries. */
export const ATTEMPT_SORT_KEYS: Record<string, SortKey> = {
  createdAt: { expr: "a.created_at", type: "timestamptz", nullable: false },
};

/** The events to deliver and the delivery attempts of each to each subscription. */
export interface AttemptStore {
  /** Stores an event once; a redelivered one is left as first stored. */
  insertEvent(e: StoredEvent & { orgId: string }): Promise<void>;
  /** Inserts an attempt; the first attempt of an event for a subscription exists at most once. */
  insertAttempt(a: Omit<AttemptRecord, "eventType">): Promise<boolean>;
  /**
   * `insertEvent` and `insertAttempt` of each of `attempts` in one statement (one round trip,
   * which is most of a fan-out's cost); resolves to how many attempts were new. Without
   * attempts it stores nothing (an event is kept only for the deliveries it has).
   */
  queueEvent(e: StoredEvent & { orgId: string }, attempts: Omit<AttemptRecord, "eventType">[]): Promise<number>;
  /**
   * `queueEvent` for many events in one statement, whatever their number (arrays, not one
   * parameter per value): a fan-out batch of a consumer that is behind costs one round trip
   * instead of one per event. Resolves to how many attempts were new.
   */
  queueEvents(
    queued: readonly { event: StoredEvent & { orgId: string }; attempts: Omit<AttemptRecord, "eventType">[] }[],
  ): Promise<number>;
  /** The number the next attempt of an event to a subscription gets. */
  nextAttemptNumber(subscriptionId: string, eventId: string): Promise<number>;
  findAttempt(subscriptionId: string, id: string): Promise<AttemptRecord | undefined>;
  /** One keyset page of a subscription's attempts, of one status or all. */
  listAttempts(
    subscriptionId: string,
    status: AttemptStatus | undefined,
    page: PageQuery,
  ): Promise<Keyed<AttemptRecord>[]>;
}

const ATTEMPT_COLUMNS = "a.*, e.type AS event_type";
const ATTEMPT_FROM = "webhooks.attempts a JOIN webhooks.events e ON e.id = a.event_id";
export const ATTEMPT_SELECT = `SELECT ${ATTEMPT_COLUMNS} FROM ${ATTEMPT_FROM}`;

/** The columns an attempt's insert writes, each with the cast its parameter needs in a multi-row VALUES. */
const ATTEMPT_INSERT: readonly (readonly [column: string, cast: string])[] = [
  ["id", ""],
  ["subscription_id", ""],
  ["event_id", ""],
  ["attempt", "::int"],
  ["trigger", ""],
  ["status", ""],
  ["scheduled_at", "::timestamptz"],
  ["attempted_at", "::timestamptz"],
  ["response_status", "::int"],
  ["duration_ms", "::int"],
  ["error", ""],
  ["next_retry_at", "::timestamptz"],
  ["retry_step", "::int"],
  ["created_at", "::timestamptz"],
];
const ATTEMPT_INSERT_COLUMNS = ATTEMPT_INSERT.map(([column]) => column).join(", ");

/** The VALUES rows of `count` attempts whose parameters start at $`first` (attemptParams' order). */
function attemptValues(first: number, count: number): string {
  const width = ATTEMPT_INSERT.length;
  return Array.from(
    { length: count },
    (_, r) => `(${ATTEMPT_INSERT.map(([, cast], c) => `$${first + r * width + c}${cast}`).join(", ")})`,
  ).join(", ");
}

/** An attempt's values in ATTEMPT_INSERT's order. */
function attemptParams(a: Omit<AttemptRecord, "eventType">): unknown[] {
  return [
    a.id,
    a.subscriptionId,
    a.eventId,
    a.attempt,
    a.trigger,
    a.status,
    a.scheduledAt,
    a.attemptedAt,
    a.responseStatus,
    a.durationMs,
    a.error,
    a.nextRetryAt,
    a.retryStep,
    a.createdAt,
  ];
}

export function attemptStore(q: Queryable): AttemptStore {
  return {
    async insertEvent(e: StoredEvent & { orgId: string }): Promise<void> {
      await q.query(
        `INSERT INTO webhooks.events (id, org_id, type, data, occurred_at, traceparent)
         VALUES ($1, $2, $3, $4::jsonb, $5, $6)
         ON CONFLICT (id) DO NOTHING`,
        [e.id, e.orgId, e.type, JSON.stringify(e.data ?? null), e.occurredAt, e.traceparent ?? null],
      );
    },

    async insertAttempt(a: Omit<AttemptRecord, "eventType">): Promise<boolean> {
      const rows = await q.query(
        `INSERT INTO webhooks.attempts (${ATTEMPT_INSERT_COLUMNS}) VALUES ${attemptValues(1, 1)}
         ON CONFLICT DO NOTHING RETURNING id`,
        attemptParams(a),
      );
      return rows.length > 0;
    },

    async queueEvent(
      e: StoredEvent & { orgId: string },
      attempts: Omit<AttemptRecord, "eventType">[],
    ): Promise<number> {
      if (attempts.length === 0) return 0;
      // The event's row first (a data-modifying WITH), then the attempts that reference it.
      const event = [e.id, e.orgId, e.type, JSON.stringify(e.data ?? null), e.occurredAt, e.traceparent ?? null];
      const rows = await q.query(
        `WITH event AS (
           INSERT INTO webhooks.events (id, org_id, type, data, occurred_at, traceparent)
           VALUES ($1, $2, $3, $4::jsonb, $5, $6) ON CONFLICT (id) DO NOTHING)
         INSERT INTO webhooks.attempts (${ATTEMPT_INSERT_COLUMNS}) VALUES ${attemptValues(event.length + 1, attempts.length)}
         ON CONFLICT DO NOTHING RETURNING id`,
        [...event, ...attempts.flatMap(attemptParams)],
      );
      return rows.length;
    },

    async queueEvents(
      queued: readonly { event: StoredEvent & { orgId: string }; attempts: Omit<AttemptRecord, "eventType">[] }[],
    ): Promise<number> {
      const withAttempts = queued.filter((x) => x.attempts.length > 0);
      if (withAttempts.length === 0) return 0;
      const events = withAttempts.map((x) => x.event);
      const attempts = withAttempts.flatMap((x) => x.attempts);
      const iso = (d: Date | null) => (d ? d.toISOString() : null);
      const column = <T>(pick: (a: Omit<AttemptRecord, "eventType">) => T) => attempts.map(pick);
      // The events first (a data-modifying WITH), then the attempts that reference them: the
      // foreign keys are checked at the statement's end, when both are in.
      const rows = await q.query(
        `WITH event AS (
           INSERT INTO webhooks.events (id, org_id, type, data, occurred_at, traceparent)
           SELECT e.id, e.org_id, e.type, e.data::jsonb, e.occurred_at, e.traceparent
             FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[])
               AS e(id, org_id, type, data, occurred_at, traceparent)
           ON CONFLICT (id) DO NOTHING)
         INSERT INTO webhooks.attempts (${ATTEMPT_INSERT_COLUMNS})
         SELECT * FROM unnest($7::text[], $8::text[], $9::text[], $10::int[], $11::text[], $12::text[],
           $13::timestamptz[], $14::timestamptz[], $15::int[], $16::int[], $17::text[], $18::timestamptz[],
           $19::int[], $20::timestamptz[])
         ON CONFLICT DO NOTHING RETURNING id`,
        [
          events.map((e) => e.id),
          events.map((e) => e.orgId),
          events.map((e) => e.type),
          events.map((e) => JSON.stringify(e.data ?? null)),
          events.map((e) => e.occurredAt.toISOString()),
          events.map((e) => e.traceparent ?? null),
          column((a) => a.id),
          column((a) => a.subscriptionId),
          column((a) => a.eventId),
          column((a) => a.attempt),
          column((a) => a.trigger),
          column((a) => a.status),
          column((a) => iso(a.scheduledAt)),
          column((a) => iso(a.attemptedAt)),
          column((a) => a.responseStatus),
          column((a) => a.durationMs),
          column((a) => a.error),
          column((a) => iso(a.nextRetryAt)),
          column((a) => a.retryStep),
          column((a) => iso(a.createdAt)),
        ],
      );
      return rows.length;
    },

    async nextAttemptNumber(subscriptionId: string, eventId: string): Promise<number> {
      const [row] = await q.query<{ n: number }>(
        "SELECT COALESCE(max(attempt), 0) + 1 AS n FROM webhooks.attempts WHERE subscription_id = $1 AND event_id = $2",
        [subscriptionId, eventId],
      );
      return Number(row?.n ?? 1);
    },

    async findAttempt(subscriptionId: string, id: string): Promise<AttemptRecord | undefined> {
      const [row] = await q.query(`${ATTEMPT_SELECT} WHERE a.subscription_id = $1 AND a.id = $2`, [subscriptionId, id]);
      return row && toAttempt(row);
    },

    async listAttempts(
      subscriptionId: string,
      status: AttemptStatus | undefined,
      page: PageQuery,
    ): Promise<Keyed<AttemptRecord>[]> {
      const p = params();
      const where = [`a.subscription_id = ${p.add(subscriptionId)}`];
      if (status) where.push(`a.status = ${p.add(status)}`);
      const source = { columns: ATTEMPT_COLUMNS, from: ATTEMPT_FROM, where, idExpr: "a.id" };
      return keysetRows(q, source, page, p, toAttempt);
    },
  };
}
