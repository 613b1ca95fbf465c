import { dateOrNull, type Queryable } from "@platform/kit/db";
import type { AttemptStats } from "../domain/health.js";
import type { RecoveryProgress, RecoveryRecord } from "../domain/recovery.js";

/** An event a subscription never received: every attempt failed (or was given up), none pending. */
export interface MissedEvent {
  eventId: string;
  type: string;
}

/** Recoveries (POST …/recover) and what a subscription's attempts say about its endpoint. */
export interface RecoveryStore {
  /** A recovery of the subscription whose attempts are still pending; undefined when none runs. */
  runningRecovery(subscriptionId: string): Promise<string | undefined>;
  /**
   * The subscription's events that happened at or after `since` and that no attempt delivered
   * (each failed or given up, none pending), oldest first. Test pings are left out.
   */
  missedEvents(subscriptionId: string, since: Date): Promise<MissedEvent[]>;
  /**
   * Inserts the recovery and one single-shot attempt of each event (trigger redeliver, numbered
   * after the event's previous attempts), in one statement.
   */
  insertRecovery(
    r: RecoveryRecord,
    attempts: readonly { id: string; eventId: string; scheduledAt: Date }[],
  ): Promise<void>;
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

    async missedEvents(subscriptionId: string, since: Date): Promise<MissedEvent[]> {
      // Attempts are created when their event is consumed, after it happened; the hour absorbs
      // clocks of two processes that disagree, the event's own time decides.
      const rows = await q.query<{ event_id: string; type: string }>(
        `SELECT a.event_id, e.type
           FROM webhooks.attempts a JOIN webhooks.events e ON e.id = a.event_id
          WHERE a.subscription_id = $1 AND a.created_at >= $2::timestamptz - interval '1 hour'
            AND e.occurred_at >= $2
          GROUP BY a.event_id, e.type, e.occurred_at
         HAVING bool_and(a.status = 'failed') AND bool_and(a.trigger <> 'test')
          ORDER BY e.occurred_at, a.event_id`,
        [subscriptionId, since],
      );
      return rows.map((r) => ({ eventId: r.event_id, type: r.type }));
    },

    async insertRecovery(
      r: RecoveryRecord,
      attempts: readonly { id: string; eventId: string; scheduledAt: Date }[],
    ): Promise<void> {
      await q.query(
        `WITH recovery AS (
           INSERT INTO webhooks.recoveries (id, org_id, subscription_id, since, queued, created_at)
           VALUES ($1, $2, $3, $4, $5, $6)
         )
         INSERT INTO webhooks.attempts (id, subscription_id, event_id, attempt, trigger, status, scheduled_at,
           created_at, recovery_id)
         SELECT n.id, $3, n.event_id,
                (SELECT COALESCE(max(x.attempt), 0) + 1 FROM webhooks.attempts x
                  WHERE x.subscription_id = $3 AND x.event_id = n.event_id),
                'redeliver', 'pending', n.scheduled_at, $6, $1
           FROM unnest($7::text[], $8::text[], $9::timestamptz[]) AS n(id, event_id, scheduled_at)`,
        [
          r.id,
          r.orgId,
          r.subscriptionId,
          r.since,
          r.queued,
          r.createdAt,
          attempts.map((a) => a.id),
          attempts.map((a) => a.eventId),
          attempts.map((a) => a.scheduledAt.toISOString()),
        ],
      );
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
