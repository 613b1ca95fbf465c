import { dateOrNull, type Queryable, type Row } from "@platform/kit/db";
import type { AttemptRecord, SubscriptionRecord } from "../domain/model.js";
import type { StoredEvent } from "../domain/payload.js";
import type { FailureRun } from "../domain/retry.js";
import { toAttempt, toSubscription } from "./rows.js";

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

/** The delivery worker's claims on due attempts and how it settles them. */
export interface DeliveryStore {
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
  claimDue(
    now: Date,
    leasedUntil: Date,
    limit: number,
    perEndpoint: number,
    leasedBy?: string,
  ): Promise<ClaimedAttempt[]>;
  /**
   * Frees the pending attempts leased by `worker` (a static worker identity): its previous run
   * died holding them, so they are due again now rather than when the leases expire.
   * Resolves to how many.
   */
  releaseLeases(worker: string): Promise<number>;
  /**
   * Refreshes the planner's statistics of webhooks.attempts (ANALYZE, skipped while another
   * holds the table's lock); resolves to the table's rows as it now estimates them.
   */
  analyzeAttempts(): Promise<number>;
  /**
   * Locks the subscriptions for settling attempts of theirs (in id order, so two workers
   * never deadlock) and reads what that needs; a deleted one is absent from the map. Their
   * attempts complete one batch at a time after this, so each sees the failure run the
   * previous one left. NO KEY UPDATE: the attempts inserted meanwhile (fan-out, retries)
   * only take a key share of the row.
   */
  lockForSettlement(subscriptionIds: readonly string[]): Promise<Map<string, SubscriptionState>>;
  /**
   * The claimed attempts whose lease is still ours (another worker took over the others
   * after theirs expired), locked until the transaction ends.
   */
  stillLeased(claimed: readonly ClaimedAttempt[]): Promise<Set<string>>;
  /**
   * Records how claimed attempts ended (those stillLeased returned, with their subscriptions
   * locked by lockForSettlement), the retries that follow, and each subscription's failure
   * run after the last of them: one statement for any number of attempts, and a second when
   * some subscription is disabled.
   */
  completeAll(
    done: readonly { claimed: ClaimedAttempt; completion: Completion; nextId: string }[],
    runs: ReadonlyMap<string, { run: FailureRun; disable?: "endpoint-gone" | "failing"; at: Date }>,
  ): Promise<void>;
}

export function deliveryStore(q: Queryable): DeliveryStore {
  return {
    async claimDue(
      now: Date,
      leasedUntil: Date,
      limit: number,
      perEndpoint: number,
      leasedBy?: string,
    ): Promise<ClaimedAttempt[]> {
      // Per endpoint, not per backlog: each endpoint with due work gets an index probe for its
      // leased attempts and one for its oldest due ones, so a claim costs the same whether a
      // hundred or a million attempts wait (migration 006's indexes). Endpoints take turns by
      // their oldest due attempt.
      const due = "a.status = 'pending' AND a.scheduled_at <= $1 AND (a.leased_until IS NULL OR a.leased_until <= $1)";
      // One statement, one round trip: the claim (the UPDATE in `claimed`) and what sending
      // needs. The attempts come from its RETURNING, as the claim left them (the statement's one
      // snapshot would show webhooks.attempts as before it), with their events and subscriptions
      // as the claim saw them. In no particular order: the worker queues them per endpoint.
      const rows = await q.query(
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
                -- No more than the endpoint has free: every row offered is locked (a tuple
                -- write each) until the commit, taken or not, and a drain refills a few slots
                -- at a time.
                LIMIT LEAST(GREATEST($3 - busy.n, 0), $4)
                FOR UPDATE SKIP LOCKED
             ) x
             WHERE s.endpoint_origin = o.endpoint_origin
             ORDER BY x.scheduled_at, x.id
             LIMIT GREATEST($3 - busy.n, 0)
           ) p
           ORDER BY p.scheduled_at, p.id
           LIMIT $4
         ), claimed AS (
           -- Due again under the row lock: a claim that raced ours never takes the same attempt.
           UPDATE webhooks.attempts a SET leased_until = $2, leased_by = $5 FROM picked
            WHERE a.id = picked.id AND ${due}
           RETURNING a.*
         )
         SELECT c.*, e.type AS event_type, e.data AS event_data, e.occurred_at AS event_occurred_at,
                e.traceparent AS event_traceparent, to_jsonb(s) AS subscription
           FROM claimed c
           JOIN webhooks.events e ON e.id = c.event_id
           JOIN webhooks.subscriptions s ON s.id = c.subscription_id`,
        [now, leasedUntil, perEndpoint, limit, leasedBy ?? null],
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
            run: { failingSince: dateOrNull(row.failing_since), lastFailureAt: dateOrNull(row.last_failure_at) },
          },
        ]),
      );
    },

    async releaseLeases(worker: string): Promise<number> {
      const rows = await q.query(
        `UPDATE webhooks.attempts SET leased_until = NULL, leased_by = NULL
          WHERE leased_by = $1 AND status = 'pending' RETURNING id`,
        [worker],
      );
      return rows.length;
    },

    async analyzeAttempts(): Promise<number> {
      await q.exec("ANALYZE (SKIP_LOCKED) webhooks.attempts");
      const [row] = await q.query<{ rows: number }>(
        "SELECT greatest(reltuples, 0)::float8 AS rows FROM pg_class WHERE oid = 'webhooks.attempts'::regclass",
      );
      return Number(row?.rows ?? 0);
    },

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

    async completeAll(
      done: readonly { claimed: ClaimedAttempt; completion: Completion; nextId: string }[],
      runs: ReadonlyMap<string, { run: FailureRun; disable?: "endpoint-gone" | "failing"; at: Date }>,
    ): Promise<void> {
      if (done.length === 0) return;
      const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);
      const retries = done.filter((d) => d.completion.retryAt);
      const subs = [...runs.entries()];
      // One statement (one round trip) whatever the batch holds: the outcomes, the retries that
      // follow (none: empty arrays, nothing inserted) and the failure runs. Its parts run on one
      // snapshot and touch different rows: the outcomes update the attempts that ended, the
      // retries are new rows (their subscriptions only get the key share of the foreign key
      // check), the runs update the subscriptions, which lockForSettlement holds already.
      // One retry chain per event and subscription has one pending attempt at a time, so the
      // numbers computed from the snapshot never collide within the batch (the outcomes leave
      // `attempt` alone).
      await q.query(
        `WITH outcomes AS (
           UPDATE webhooks.attempts a SET status = c.status, attempted_at = c.attempted_at,
             response_status = c.response_status, duration_ms = c.duration_ms, error = c.error,
             next_retry_at = c.next_retry_at, leased_until = NULL, leased_by = NULL
             FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::int[], $5::int[], $6::text[], $7::timestamptz[])
               AS c(id, status, attempted_at, response_status, duration_ms, error, next_retry_at)
            WHERE a.id = c.id
         ), retries AS (
           INSERT INTO webhooks.attempts (id, subscription_id, event_id, attempt, trigger, status, scheduled_at,
             retry_step, created_at)
           SELECT r.id, r.subscription_id, r.event_id,
                  (SELECT COALESCE(max(x.attempt), 0) + 1 FROM webhooks.attempts x
                    WHERE x.subscription_id = r.subscription_id AND x.event_id = r.event_id),
                  'retry', 'pending', r.scheduled_at, r.retry_step, r.created_at
             FROM unnest($8::text[], $9::text[], $10::text[], $11::timestamptz[], $12::int[], $13::timestamptz[])
               AS r(id, subscription_id, event_id, scheduled_at, retry_step, created_at)
         )
         UPDATE webhooks.subscriptions s SET failing_since = c.failing_since, last_failure_at = c.last_failure_at
           FROM unnest($14::text[], $15::timestamptz[], $16::timestamptz[]) AS c(id, failing_since, last_failure_at)
          WHERE s.id = c.id`,
        [
          done.map((d) => d.claimed.attempt.id),
          done.map((d) => d.completion.status),
          done.map((d) => d.completion.attemptedAt.toISOString()),
          done.map((d) => d.completion.responseStatus),
          done.map((d) => d.completion.durationMs),
          done.map((d) => d.completion.error),
          done.map((d) => iso(d.completion.retryAt)),
          retries.map((d) => d.nextId),
          retries.map((d) => d.claimed.attempt.subscriptionId),
          retries.map((d) => d.claimed.attempt.eventId),
          retries.map((d) => iso(d.completion.retryAt)),
          retries.map((d) => (d.claimed.attempt.retryStep ?? 0) + 1),
          retries.map((d) => d.completion.attemptedAt.toISOString()),
          subs.map(([id]) => id),
          subs.map(([, r]) => iso(r.run.failingSince)),
          subs.map(([, r]) => iso(r.run.lastFailureAt)),
        ],
      );
      // Apart, after the runs: it updates the same subscription rows, which one statement must
      // not update twice. Rare (a subscription is disabled once).
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
