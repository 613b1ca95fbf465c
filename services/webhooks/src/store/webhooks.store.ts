import type { Queryable, Row } from "@platform/kit/db";
import { type Keyed, keyset, type PageQuery, params, positionValue, type SortKey } from "@platform/kit/keyset";
import { problem } from "@platform/kit/problems";
import { endpointOrigin } from "../domain/endpoint.js";
import type { StoredEvent } from "../domain/payload.js";
import type { FailureRun } from "../domain/retry.js";
import type { AttemptRecord, AttemptStatus, SubscriptionRecord } from "../model.js";
import { date, toAttempt, toSubscription } from "./rows.js";

/** The sort keys of GET /webhook-subscriptions. */
export const SUBSCRIPTION_SORT_KEYS: Record<string, SortKey> = {
  createdAt: { expr: "s.created_at", type: "timestamptz", nullable: false },
  updatedAt: { expr: "s.updated_at", type: "timestamptz", nullable: false },
};

/** The sort keys of GET /webhook-subscriptions/{id}/deliveries. */
export const ATTEMPT_SORT_KEYS: Record<string, SortKey> = {
  createdAt: { expr: "a.created_at", type: "timestamptz", nullable: false },
};

const CHECK_VIOLATION = "23514";

/** An attempt claimed for sending, with what sending it needs. */
export interface ClaimedAttempt {
  attempt: AttemptRecord;
  subscription: SubscriptionRecord;
  event: StoredEvent;
  /** The lease this worker holds; completing checks it is still ours. */
  leasedUntil: Date;
}

/** How an attempt ended and what follows it, written in one transaction. */
export interface Completion {
  status: "succeeded" | "failed";
  attemptedAt: Date;
  responseStatus: number | null;
  durationMs: number;
  error: string | null;
  /** The retry to insert after a failure; undefined when none follows. */
  retryAt?: Date;
  /** The subscription's failure run after this attempt. */
  run: FailureRun;
  /** Disables the subscription with this reason. */
  disable?: "endpoint-gone" | "failing";
}

/** What settling an attempt needs to know of its subscription, read under its lock. */
export interface SubscriptionState {
  enabled: boolean;
  run: FailureRun;
}

const ATTEMPT_SELECT =
  "SELECT a.*, e.type AS event_type FROM webhooks.attempts a JOIN webhooks.events e ON e.id = a.event_id";

/** The webhooks service's queries, on a pool or inside a transaction. */
export function webhooksStore(q: Queryable) {
  return {
    /** Inserts a subscription and counts it against the org's limit of 10 in the same statement's transaction. */
    async insertSubscription(s: SubscriptionRecord): Promise<void> {
      try {
        await q.query(
          `INSERT INTO webhooks.org_subscription_counts (org_id, subscriptions) VALUES ($1, 1)
           ON CONFLICT (org_id) DO UPDATE SET subscriptions = webhooks.org_subscription_counts.subscriptions + 1`,
          [s.orgId],
        );
      } catch (err) {
        if ((err as { code?: string }).code === CHECK_VIOLATION) {
          throw problem("webhook-limit-reached", "An organization can have at most 10 webhook subscriptions.", {
            limit: 10,
          });
        }
        throw err;
      }
      await q.query(
        `INSERT INTO webhooks.subscriptions (id, org_id, endpoint_url, events, description, enabled, payload_version,
           secret, previous_secret, previous_secret_expires_at, disabled_reason, disabled_at, failing_since, created_at,
           updated_at, last_failure_at, endpoint_origin)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
        [
          s.id,
          s.orgId,
          s.endpointUrl,
          s.events,
          s.description,
          s.enabled,
          s.payloadVersion,
          s.secret,
          s.previousSecret,
          s.previousSecretExpiresAt,
          s.disabledReason,
          s.disabledAt,
          s.failingSince,
          s.createdAt,
          s.updatedAt,
          s.lastFailureAt,
          endpointOrigin(s.endpointUrl),
        ],
      );
    },

    /** Another org's subscription is as absent as an unknown one; `lock` holds it until the transaction ends. */
    async findSubscription(orgId: string, id: string, lock = false): Promise<SubscriptionRecord | undefined> {
      const [row] = await q.query(
        `SELECT * FROM webhooks.subscriptions WHERE org_id = $1 AND id = $2${lock ? " FOR UPDATE" : ""}`,
        [orgId, id],
      );
      return row && toSubscription(row);
    },

    async updateSubscription(s: SubscriptionRecord): Promise<void> {
      await q.query(
        `UPDATE webhooks.subscriptions SET endpoint_url = $3, events = $4, description = $5, enabled = $6,
           secret = $7, previous_secret = $8, previous_secret_expires_at = $9, disabled_reason = $10,
           disabled_at = $11, failing_since = $12, updated_at = $13, last_failure_at = $14, endpoint_origin = $15
         WHERE org_id = $1 AND id = $2`,
        [
          s.orgId,
          s.id,
          s.endpointUrl,
          s.events,
          s.description,
          s.enabled,
          s.secret,
          s.previousSecret,
          s.previousSecretExpiresAt,
          s.disabledReason,
          s.disabledAt,
          s.failingSince,
          s.updatedAt,
          s.lastFailureAt,
          endpointOrigin(s.endpointUrl),
        ],
      );
    },

    /** Deletes it with its attempts and frees its place under the limit; false when there was none. */
    async deleteSubscription(orgId: string, id: string): Promise<boolean> {
      const gone = await q.query("DELETE FROM webhooks.subscriptions WHERE org_id = $1 AND id = $2 RETURNING id", [
        orgId,
        id,
      ]);
      if (gone.length === 0) return false;
      await q.query("UPDATE webhooks.org_subscription_counts SET subscriptions = subscriptions - 1 WHERE org_id = $1", [
        orgId,
      ]);
      return true;
    },

    async listSubscriptions(orgId: string, page: PageQuery): Promise<Keyed<SubscriptionRecord>[]> {
      const p = params();
      const k = keyset(page.sort.key, "s.id", page.sort.descending, page.after, p);
      const rows = await q.query(
        `SELECT s.*, ${page.sort.key.expr} AS sort_value FROM webhooks.subscriptions s
          WHERE s.org_id = ${p.add(orgId)} AND ${k.where} ORDER BY ${k.orderBy} LIMIT ${p.add(page.limit)}`,
        p.values,
      );
      return rows.map((r) => ({ item: toSubscription(r), position: [positionValue(r.sort_value), String(r.id)] }));
    },

    /** The enabled subscriptions of an org that receive `type`. */
    async receivers(orgId: string, type: string): Promise<SubscriptionRecord[]> {
      const rows = await q.query(
        "SELECT * FROM webhooks.subscriptions WHERE org_id = $1 AND enabled AND $2 = ANY(events) ORDER BY id",
        [orgId, type],
      );
      return rows.map(toSubscription);
    },

    /** Stores an event once; a redelivered one is left as first stored. */
    async insertEvent(e: StoredEvent & { orgId: string }): Promise<void> {
      await q.query(
        `INSERT INTO webhooks.events (id, org_id, type, data, occurred_at, traceparent)
         VALUES ($1, $2, $3, $4::jsonb, $5, $6)
         ON CONFLICT (id) DO NOTHING`,
        [e.id, e.orgId, e.type, JSON.stringify(e.data ?? null), e.occurredAt, e.traceparent ?? null],
      );
    },

    /** Inserts an attempt; the first attempt of an event for a subscription exists at most once. */
    async insertAttempt(a: Omit<AttemptRecord, "eventType">): Promise<boolean> {
      const rows = await q.query(
        `INSERT INTO webhooks.attempts (id, subscription_id, event_id, attempt, trigger, status, scheduled_at,
           attempted_at, response_status, duration_ms, error, next_retry_at, retry_step, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
         ON CONFLICT DO NOTHING RETURNING id`,
        [
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
        ],
      );
      return rows.length > 0;
    },

    /** The number the next attempt of an event to a subscription gets. */
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
      const k = keyset(page.sort.key, "a.id", page.sort.descending, page.after, p);
      const rows = await q.query(
        `${ATTEMPT_SELECT.replace("SELECT a.*", `SELECT a.*, ${page.sort.key.expr} AS sort_value`)}
          WHERE ${[...where, k.where].join(" AND ")} ORDER BY ${k.orderBy} LIMIT ${p.add(page.limit)}`,
        p.values,
      );
      return rows.map((r) => ({ item: toAttempt(r), position: [positionValue(r.sort_value), String(r.id)] }));
    },

    /**
     * Claims due pending attempts for `leasedUntil`: at most `perEndpoint` to one endpoint
     * (scheme, host and port, whichever subscriptions they belong to) in flight, claims still
     * leased by any worker included, so a slow or dead receiver holds a few slots, never the
     * whole worker, however many subscriptions point at it. SKIP LOCKED lets several workers
     * claim side by side (two claiming at the same instant may each take the full share: a
     * soft cap); an expired lease (a worker that died mid-send) makes the attempt claimable
     * again. Disabled subscriptions get only the attempts someone asked for explicitly
     * (redeliver, test).
     */
    async claimDue(now: Date, leasedUntil: Date, limit: number, perEndpoint: number): Promise<ClaimedAttempt[]> {
      // Per endpoint, not per backlog: each endpoint with due work gets an index probe for its
      // leased attempts and one for its oldest due ones, so a claim costs the same whether a
      // hundred or a million attempts wait (migration 006's indexes). Endpoints take turns by
      // their oldest due attempt.
      const due = "a.status = 'pending' AND a.scheduled_at <= $1 AND (a.leased_until IS NULL OR a.leased_until <= $1)";
      const ids = await q.query<{ id: string }>(
        `WITH endpoints AS (
           SELECT DISTINCT s.endpoint_origin FROM webhooks.subscriptions s
            WHERE EXISTS (SELECT 1 FROM webhooks.attempts a WHERE a.subscription_id = s.id AND ${due}
                            AND (s.enabled OR a.trigger IN ('redeliver', 'test')))
         ), picked AS (
           SELECT p.id FROM endpoints o
           CROSS JOIN LATERAL (
             SELECT count(*) AS n FROM webhooks.attempts b JOIN webhooks.subscriptions s ON s.id = b.subscription_id
              WHERE s.endpoint_origin = o.endpoint_origin AND b.status = 'pending' AND b.leased_until > $1
           ) busy
           CROSS JOIN LATERAL (
             -- Each subscription of the endpoint offers its oldest few, the endpoint takes the
             -- oldest of those: an index probe per subscription, never a sort of its backlog.
             SELECT x.id, x.scheduled_at FROM webhooks.subscriptions s
             CROSS JOIN LATERAL (
               SELECT a.id, a.scheduled_at FROM webhooks.attempts a
                WHERE a.subscription_id = s.id AND ${due} AND (s.enabled OR a.trigger IN ('redeliver', 'test'))
                ORDER BY a.scheduled_at, a.id
                LIMIT $3
                FOR UPDATE SKIP LOCKED
             ) x
             WHERE s.endpoint_origin = o.endpoint_origin
             ORDER BY x.scheduled_at, x.id
             LIMIT GREATEST($3 - busy.n, 0)
           ) p
           ORDER BY p.scheduled_at, p.id
           LIMIT $4
         )
         -- Due again under the row lock: a claim that raced ours never takes the same attempt.
         UPDATE webhooks.attempts a SET leased_until = $2 FROM picked
          WHERE a.id = picked.id AND ${due}
         RETURNING a.id`,
        [now, leasedUntil, perEndpoint, limit],
      );
      if (ids.length === 0) return [];
      const rows = await q.query(
        `SELECT a.*, e.type AS event_type, e.data AS event_data, e.occurred_at AS event_occurred_at,
                e.traceparent AS event_traceparent, to_jsonb(s) AS subscription
           FROM webhooks.attempts a
           JOIN webhooks.events e ON e.id = a.event_id
           JOIN webhooks.subscriptions s ON s.id = a.subscription_id
          WHERE a.id = ANY($1::text[])`,
        [ids.map((r) => r.id)],
      );
      return rows.map((r: Row) => ({
        attempt: toAttempt(r),
        subscription: toSubscription(r.subscription as Row),
        event: {
          id: String(r.event_id),
          type: String(r.event_type),
          data: r.event_data,
          occurredAt: new Date(r.event_occurred_at as string | Date),
          ...(r.event_traceparent ? { traceparent: String(r.event_traceparent) } : {}),
        },
        leasedUntil,
      }));
    },

    /**
     * Locks the subscriptions for settling attempts of theirs (in id order, so two workers
     * never deadlock) and reads what that needs; a deleted one is absent from the map. Their
     * attempts complete one batch at a time after this, so each sees the failure run the
     * previous one left. NO KEY UPDATE: the attempts inserted meanwhile (fan-out, retries)
     * only take a key share of the row.
     */
    async lockForSettlement(subscriptionIds: readonly string[]): Promise<Map<string, SubscriptionState>> {
      const rows = await q.query(
        `SELECT id, enabled, failing_since, last_failure_at FROM webhooks.subscriptions
          WHERE id = ANY($1::text[]) ORDER BY id FOR NO KEY UPDATE`,
        [[...new Set(subscriptionIds)]],
      );
      return new Map(
        rows.map((row) => [
          String(row.id),
          {
            enabled: Boolean(row.enabled),
            run: { failingSince: date(row.failing_since), lastFailureAt: date(row.last_failure_at) },
          },
        ]),
      );
    },

    /**
     * The claimed attempts whose lease is still ours (another worker took over the others
     * after theirs expired), locked until the transaction ends.
     */
    async stillLeased(claimed: readonly ClaimedAttempt[]): Promise<Set<string>> {
      const rows = await q.query<{ id: string }>(
        `SELECT a.id FROM webhooks.attempts a
           JOIN unnest($1::text[], $2::timestamptz[]) AS c(id, leased_until) ON a.id = c.id
          WHERE a.status = 'pending' AND a.leased_until = c.leased_until
          ORDER BY a.id FOR UPDATE OF a`,
        [claimed.map((c) => c.attempt.id), claimed.map((c) => c.leasedUntil.toISOString())],
      );
      return new Set(rows.map((r) => r.id));
    },

    /**
     * Records how claimed attempts ended (those stillLeased returned, with their subscriptions
     * locked by lockForSettlement), the retries that follow, and each subscription's failure
     * run after the last of them: a few statements for any number of attempts.
     */
    async completeAll(
      done: readonly { claimed: ClaimedAttempt; completion: Completion; nextId: string }[],
      runs: ReadonlyMap<string, { run: FailureRun; disable?: "endpoint-gone" | "failing"; at: Date }>,
    ): Promise<void> {
      if (done.length === 0) return;
      const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);
      await q.query(
        `UPDATE webhooks.attempts a SET status = c.status, attempted_at = c.attempted_at,
           response_status = c.response_status, duration_ms = c.duration_ms, error = c.error,
           next_retry_at = c.next_retry_at, leased_until = NULL
           FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::int[], $5::int[], $6::text[], $7::timestamptz[])
             AS c(id, status, attempted_at, response_status, duration_ms, error, next_retry_at)
          WHERE a.id = c.id`,
        [
          done.map((d) => d.claimed.attempt.id),
          done.map((d) => d.completion.status),
          done.map((d) => d.completion.attemptedAt.toISOString()),
          done.map((d) => d.completion.responseStatus),
          done.map((d) => d.completion.durationMs),
          done.map((d) => d.completion.error),
          done.map((d) => iso(d.completion.retryAt)),
        ],
      );
      const retries = done.filter((d) => d.completion.retryAt);
      if (retries.length > 0) {
        // One retry chain per event and subscription has one pending attempt at a time, so
        // the numbers computed here never collide within the batch.
        await q.query(
          `INSERT INTO webhooks.attempts (id, subscription_id, event_id, attempt, trigger, status, scheduled_at,
             retry_step, created_at)
           SELECT r.id, r.subscription_id, r.event_id,
                  (SELECT COALESCE(max(x.attempt), 0) + 1 FROM webhooks.attempts x
                    WHERE x.subscription_id = r.subscription_id AND x.event_id = r.event_id),
                  'retry', 'pending', r.scheduled_at, r.retry_step, r.created_at
             FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::int[], $6::timestamptz[])
               AS r(id, subscription_id, event_id, scheduled_at, retry_step, created_at)`,
          [
            retries.map((d) => d.nextId),
            retries.map((d) => d.claimed.attempt.subscriptionId),
            retries.map((d) => d.claimed.attempt.eventId),
            retries.map((d) => iso(d.completion.retryAt)),
            retries.map((d) => (d.claimed.attempt.retryStep ?? 0) + 1),
            retries.map((d) => d.completion.attemptedAt.toISOString()),
          ],
        );
      }
      const subs = [...runs.entries()];
      await q.query(
        `UPDATE webhooks.subscriptions s SET failing_since = c.failing_since, last_failure_at = c.last_failure_at
           FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[]) AS c(id, failing_since, last_failure_at)
          WHERE s.id = c.id`,
        [
          subs.map(([id]) => id),
          subs.map(([, r]) => iso(r.run.failingSince)),
          subs.map(([, r]) => iso(r.run.lastFailureAt)),
        ],
      );
      const disabled = subs.filter(([, r]) => r.disable);
      if (disabled.length > 0) {
        await q.query(
          `UPDATE webhooks.subscriptions s SET enabled = false, disabled_reason = c.reason, disabled_at = c.at,
             updated_at = c.at
             FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS c(id, reason, at)
            WHERE s.id = c.id AND s.enabled`,
          [disabled.map(([id]) => id), disabled.map(([, r]) => r.disable), disabled.map(([, r]) => r.at.toISOString())],
        );
      }
    },
  };
}

export type WebhooksStore = ReturnType<typeof webhooksStore>;
