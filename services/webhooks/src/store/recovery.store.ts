import { dateOrNull, type Queryable } from "@platform/kit/db";
import type { AttemptStats } from "../domain/health.js";
import type { RecoveryProgress, RecoveryRecord } from "../domain/recovery.js";

/**
 * An event a subscription never received: an attempt failed, none succeeded, none is in
 * flight. `pendingId` is its one waiting attempt (a retry not due yet), which the recovery
 * takes over instead of adding a second; undefined when its attempts ran out.
 */
export interface MissedEvent {
  eventId: string;
  type: string;
  pendingId: string | undefined;
}

/** Recoveries (POST …/recover) and what a subscription's attempts say about its endpoint. */
export interface RecoveryStore {
  /** A recovery of the subscription whose attempts are still pending; undefined when none runs. */
  runningRecovery(subscriptionId: string): Promise<string | undefined>;
  /**
   * The subscription's events that happened at or after `since` that no attempt delivered: one
   * failed, none succeeded, none is in flight (leased at `now`), at most one waits; oldest
   * first. Test deliveries are left out.
   */
  missedEvents(subscriptionId: string, since: Date, now: Date): Promise<MissedEvent[]>;
  /** Inserts the recovery (its `queued` as given). */
  insertRecovery(r: RecoveryRecord): Promise<void>;
  /**
   * Makes waiting attempts the recovery's (single-shot `redeliver`, due at `scheduledAt`) when
   * still pending and not claimed by a worker meanwhile; resolves to how many it took.
   */
  takeOverAttempts(
    recoveryId: string,
    attempts: readonly { id: string; scheduledAt: Date }[],
    now: Date,
  ): Promise<number>;
  /** Inserts one single-shot attempt of each event for the recovery, numbered after the event's previous attempts. */
  queueRecoveryAttempts(
    r: RecoveryRecord,
    attempts: readonly { id: string; eventId: string; scheduledAt: Date }[],
  ): Promise<number>;
  /** Sets how many attempts the recovery queued. */
  setRecoveryQueued(id: string, queued: number): Promise<void>;
  /** A recovery of the subscription with its attempts counted; undefined when unknown. */
  findRecovery(
    subscriptionId: string,
    id: string,
  ): Promise<{ recovery: RecoveryRecord; progress: RecoveryProgress } | undefined>;
  /** Last success, last failure and the sent/succeeded counts since `recentSince`, per subscription. */
  attemptStats(subscriptionIds: readonly string[], recentSince: Date): Promise<Map<string, AttemptStats>>;
}

export function recoveryStore(q: Queryable): RecoveryStore {
  return {
    async runningRecovery(subscriptionId: string): Promise<string | undefined> {
      const [row] = await q.query<{ id: string }>(
        `SELECT r.id FROM webhooks.recoveries r
          WHERE r.subscription_id = $1
            AND EXISTS (SELECT 1 FROM webhooks.attempts a WHERE a.recovery_id = r.id AND a.status = 'pending')
          LIMIT 1`,
        [subscriptionId],
      );
      return row?.id;
    },

    async missedEvents(subscriptionId: string, since: Date, now: Date): Promise<MissedEvent[]> {
      // Attempts are created when their event is consumed, after it happened; the hour absorbs
      // clocks of two processes that disagree, the event's own time decides.
      const pending = "a.status = 'pending'";
      const rows = await q.query<{ event_id: string; type: string; pending_ids: string[] | null }>(
        `SELECT a.event_id, e.type, array_agg(a.id) FILTER (WHERE ${pending}) AS pending_ids
           FROM webhooks.attempts a JOIN webhooks.events e ON e.id = a.event_id
          WHERE a.subscription_id = $1 AND a.created_at >= $2::timestamptz - interval '1 hour'
            AND e.occurred_at >= $2
          GROUP BY a.event_id, e.type, e.occurred_at
         HAVING bool_or(a.status = 'failed') AND NOT bool_or(a.status = 'succeeded')
            AND NOT bool_or(${pending} AND a.leased_until > $3)
            AND count(*) FILTER (WHERE ${pending}) <= 1
            AND bool_and(a.trigger <> 'test')
          ORDER BY e.occurred_at, a.event_id`,
        [subscriptionId, since, now],
      );
      return rows.map((r) => ({ eventId: r.event_id, type: r.type, pendingId: r.pending_ids?.[0] ?? undefined }));
    },

    async insertRecovery(r: RecoveryRecord): Promise<void> {
      await q.query(
        `INSERT INTO webhooks.recoveries (id, org_id, subscription_id, since, queued, created_at)
         VALUES ($1, $2, $3, $4, $5, $6)`,
        [r.id, r.orgId, r.subscriptionId, r.since, r.queued, r.createdAt],
      );
    },

    async takeOverAttempts(
      recoveryId: string,
      attempts: readonly { id: string; scheduledAt: Date }[],
      now: Date,
    ): Promise<number> {
      if (attempts.length === 0) return 0;
      // Under the row lock: a worker that claimed one meanwhile keeps it (it is in flight).
      const rows = await q.query(
        `UPDATE webhooks.attempts a SET trigger = 'redeliver', retry_step = NULL, scheduled_at = t.scheduled_at,
                recovery_id = $1
           FROM unnest($2::text[], $3::timestamptz[]) AS t(id, scheduled_at)
          WHERE a.id = t.id AND a.status = 'pending' AND (a.leased_until IS NULL OR a.leased_until <= $4)
          RETURNING a.id`,
        [recoveryId, attempts.map((a) => a.id), attempts.map((a) => a.scheduledAt.toISOString()), now],
      );
      return rows.length;
    },

    async queueRecoveryAttempts(
      r: RecoveryRecord,
      attempts: readonly { id: string; eventId: string; scheduledAt: Date }[],
    ): Promise<number> {
      if (attempts.length === 0) return 0;
      const rows = await q.query(
        `INSERT INTO webhooks.attempts (id, subscription_id, event_id, attempt, trigger, status, scheduled_at,
           created_at, recovery_id)
         SELECT n.id, $2, n.event_id,
                (SELECT COALESCE(max(x.attempt), 0) + 1 FROM webhooks.attempts x
                  WHERE x.subscription_id = $2 AND x.event_id = n.event_id),
                'redeliver', 'pending', n.scheduled_at, $3, $1
           FROM unnest($4::text[], $5::text[], $6::timestamptz[]) AS n(id, event_id, scheduled_at)
         RETURNING id`,
        [
          r.id,
          r.subscriptionId,
          r.createdAt,
          attempts.map((a) => a.id),
          attempts.map((a) => a.eventId),
          attempts.map((a) => a.scheduledAt.toISOString()),
        ],
      );
      return rows.length;
    },

    async setRecoveryQueued(id: string, queued: number): Promise<void> {
      await q.query("UPDATE webhooks.recoveries SET queued = $2 WHERE id = $1", [id, queued]);
    },

    async findRecovery(subscriptionId: string, id: string) {
      const [row] = await q.query(
        `SELECT r.*,
                (SELECT count(*) FROM webhooks.attempts a WHERE a.recovery_id = r.id AND a.status = 'pending') AS pending,
                (SELECT count(*) FROM webhooks.attempts a WHERE a.recovery_id = r.id AND a.status = 'succeeded') AS succeeded,
                (SELECT count(*) FROM webhooks.attempts a WHERE a.recovery_id = r.id AND a.status = 'failed') AS failed,
                (SELECT max(a.attempted_at) FROM webhooks.attempts a WHERE a.recovery_id = r.id) AS last_attempted_at
           FROM webhooks.recoveries r WHERE r.subscription_id = $1 AND r.id = $2`,
        [subscriptionId, id],
      );
      if (!row) return undefined;
      return {
        recovery: {
          id: String(row.id),
          orgId: String(row.org_id),
          subscriptionId: String(row.subscription_id),
          since: new Date(row.since as string | Date),
          queued: Number(row.queued),
          createdAt: new Date(row.created_at as string | Date),
        },
        progress: {
          pending: Number(row.pending),
          succeeded: Number(row.succeeded),
          failed: Number(row.failed),
          lastAttemptedAt: dateOrNull(row.last_attempted_at),
        },
      };
    },

    async attemptStats(subscriptionIds: readonly string[], recentSince: Date): Promise<Map<string, AttemptStats>> {
      if (subscriptionIds.length === 0) return new Map();
      // Index probes on attempts_settled per subscription and status (migration 010).
      const rows = await q.query(
        `SELECT s.id,
                (SELECT max(a.attempted_at) FROM webhooks.attempts a
                  WHERE a.subscription_id = s.id AND a.status = 'succeeded') AS last_success_at,
                (SELECT max(a.attempted_at) FROM webhooks.attempts a
                  WHERE a.subscription_id = s.id AND a.status = 'failed') AS last_failure_at,
                (SELECT count(*) FROM webhooks.attempts a
                  WHERE a.subscription_id = s.id AND a.status = 'succeeded' AND a.attempted_at >= $2) AS recent_succeeded,
                (SELECT count(*) FROM webhooks.attempts a
                  WHERE a.subscription_id = s.id AND a.status = 'failed' AND a.attempted_at >= $2) AS recent_failed
           FROM unnest($1::text[]) AS s(id)`,
        [[...subscriptionIds], recentSince],
      );
      return new Map(
        rows.map((r) => [
          String(r.id),
          {
            lastSuccessAt: dateOrNull(r.last_success_at),
            lastFailureAt: dateOrNull(r.last_failure_at),
            recentSucceeded: Number(r.recent_succeeded),
            recentSent: Number(r.recent_succeeded) + Number(r.recent_failed),
          },
        ]),
      );
    },
  };
}
