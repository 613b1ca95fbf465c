import { context } from "@opentelemetry/api";
import { suppressTracing } from "@opentelemetry/core";
import type { EventBus } from "./bus.js";
import { type Clock, systemClock } from "./clock.js";
import type { Db, Queryable } from "./db.js";
import { outsideCall } from "./deadline.js";
import { purgeExpired } from "./housekeeping.js";
import type { Logger } from "./logger.js";
import { onOutboxCommit, toBusMessage } from "./outbox.js";
import {
  byTopic,
  envelopeOf,
  type OutboxRow,
  observeOutboxLag,
  runsOfSameTrace,
  traceContextOf,
} from "./outbox-rows.js";
import { tracing } from "./tracing.js";

export interface OutboxRelayOptions {
  db: Db;
  bus: EventBus;
  logger: Logger;
  /** Polling period while rows are backing off or the database or the bus is unreachable. */
  intervalMs?: number;
  /**
   * Polling period otherwise. Every commit of this process's outbox rows wakes the relay at once
   * (`onOutboxCommit`), so this is a safety net: for rows another process committed and did not
   * publish (a replica stopped right after its commit).
   */
  idleIntervalMs?: number;
  /** Rows per round (one transaction). */
  batchSize?: number;
  /**
   * After a round that published several rows (rows come faster than rounds), rows committed
   * meanwhile wait this long for the next round, so that under load they go out together: one
   * claim, one broker request and one consumer batch for many rows instead of one each. While
   * rounds publish a row each (a steady 100 writes/s), each goes at once.
   */
  lingerMs?: number;
  /** Delay before the first retry of a failed row; doubles per attempt up to `maxBackoffMs`. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** The clock idempotency records are written with, for their hourly purge. */
  clock?: Clock;
}

export interface OutboxRelay {
  /** Publishes until nothing is publishable now; resolves to how many rows were published. */
  drain(): Promise<number>;
  /** Asks for a round right away (commits through `enqueueEvent` ask by themselves). */
  notify(): void;
  /** Stops polling and waits for the round in progress. */
  stop(): Promise<void>;
}

interface RoundResult {
  published: number;
  failed: number;
  /** The round claimed a whole batch, so more rows may be due. */
  full: boolean;
  /** Another process's relay held the schema's lock: rows it did not see wait for a retry. */
  busy: boolean;
}

/**
 * How soon a relay tries again after another replica's relay held the lock. That relay claimed
 * only the rows committed before its claim, so a row this process committed meanwhile is ours.
 */
const LOCK_BUSY_RETRY_MS = 20;

const PURGE_EVERY_MS = 60 * 60 * 1000;

/**
 * Publishes outbox rows to the bus and marks them published. Rows that fail stay in the
 * outbox with a growing delay and are retried for as long as it takes; until then, later
 * rows of the same topic wait behind them so per-key order survives an outage. Every hour it
 * also purges the kit's tables (`purgeExpired`), so each process that writes does it.
 */
export function startOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { db, bus, logger } = options;
  const clock = options.clock ?? systemClock;
  const intervalMs = options.intervalMs ?? 250;
  const idleIntervalMs = options.idleIntervalMs ?? 1000;
  const batchSize = options.batchSize ?? 100;
  const lingerMs = options.lingerMs ?? 10;
  const minBackoffMs = options.minBackoffMs ?? 250;
  const maxBackoffMs = options.maxBackoffMs ?? 5000;
  const s = db.schema;

  const stopObserving = observeOutboxLag(db);

  let busDown = false;
  let dbDown = false;
  let lastPurge = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let notified = false;
  // When the last round that published several rows ended: the next waits until lingerMs after it.
  let lastBusyAt = Number.NEGATIVE_INFINITY;
  // The last round found another replica's relay holding the lock.
  let lockBusy = false;
  // Rounds never overlap inside one process; the advisory lock keeps replicas apart.
  let queue: Promise<unknown> = Promise.resolve();

  /** Publishes one topic's rows in order; failed rows back off. Resolves to how many were published. */
  async function publishTopic(q: Queryable, topic: string, rows: OutboxRow[]): Promise<number> {
    let done = 0;
    try {
      // Traced, each request's rows go out inside its trace, so the instrumented client's send
      // span (and the traceparent it writes) continues that trace instead of a new one.
      // Untraced, the whole topic goes out in one request: each message already carries its
      // row's traceparent, and one send per request cost a broker round trip each.
      for (const run of tracing() ? runsOfSameTrace(rows) : [rows]) {
        await context.with(traceContextOf(run[0]?.traceparent ?? null), () =>
          bus.publish(
            topic,
            run.map((r) => toBusMessage(envelopeOf(r), r.key)),
          ),
        );
        done += run.length;
      }
    } catch (err) {
      // The claim marked them published: this takes it back for those that were not.
      const failed = rows.slice(done);
      await q.query(
        `UPDATE ${s}.outbox SET published_at = NULL, attempts = attempts + 1, last_error = $2,
           next_attempt_at = now() + LEAST($4::float8, $3::float8 * power(2, LEAST(attempts, 20))) * interval '1 millisecond'
         WHERE id = ANY($1::uuid[])`,
        [failed.map((r) => r.id), String((err as Error)?.message ?? err).slice(0, 1000), minBackoffMs, maxBackoffMs],
      );
      if (!busDown) {
        busDown = true;
        logger.warn(
          { err, topic, rows: failed.length },
          "outbox: publishing failed; rows kept and retried with backoff",
        );
      }
    }
    if (busDown && done > 0 && done === rows.length) {
      busDown = false;
      logger.info({ topic }, "outbox: publishing recovered");
    }
    return done;
  }

  // The relay's own polling would put a transaction's spans into traces several times a
  // second; only its publishes belong to a trace (that of the request that wrote the row).
  const untraced = <T>(fn: () => Promise<T>): Promise<T> => context.with(suppressTracing(context.active()), fn);

  function round(): Promise<RoundResult> {
    return untraced(() =>
      db.tx(
        async (q) => {
          // One statement takes the advisory lock (which keeps replicas apart; without it the
          // statement finds nothing), claims the due rows and marks them published, all under
          // this transaction: a publish that fails takes the mark back (publishTopic) and a crash
          // rolls it back, so the round costs BEGIN, this, and COMMIT. A row waits while an
          // older unpublished row of its topic is backing off.
          // When the lock is taken, the statement returns one row with busy = true instead.
          const claimed = await q.query<OutboxRow & { seq: number; busy: boolean }>(
            `WITH relay AS MATERIALIZED (SELECT pg_try_advisory_xact_lock(hashtext($2)) AS locked),
         due AS (
           SELECT o.id FROM ${s}.outbox o, relay
           WHERE relay.locked AND o.published_at IS NULL AND o.next_attempt_at <= now()
             AND NOT EXISTS (
               SELECT 1 FROM ${s}.outbox b
               WHERE b.published_at IS NULL AND b.topic = o.topic AND b.seq < o.seq AND b.next_attempt_at > now())
           ORDER BY o.seq
           LIMIT $1
           FOR UPDATE OF o SKIP LOCKED),
         claimed AS (
           UPDATE ${s}.outbox o SET published_at = now(), last_error = NULL FROM due WHERE o.id = due.id
           RETURNING o.seq, o.id, o.topic, o.key, o.type, o.source, o.subject, o.time, o.traceparent, o.data)
         SELECT false AS busy, claimed.* FROM claimed
         UNION ALL
         SELECT true, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM relay WHERE NOT relay.locked`,
            [batchSize, `outbox-relay:${s}`],
          );
          const busy = claimed.length === 1 && claimed[0]?.busy === true;
          // RETURNING has no order: published in the order they were written.
          const rows = busy ? [] : claimed.sort((a, b) => Number(a.seq) - Number(b.seq));
          const result: RoundResult = { published: 0, failed: 0, full: rows.length >= batchSize, busy };
          for (const [topic, list] of byTopic(rows)) {
            const published = await publishTopic(q, topic, list);
            result.published += published;
            result.failed += list.length - published;
          }
          return result;
        },
        // Losing the mark in a database crash only publishes the rows again (consumers skip
        // an event id they have processed), so the commit need not wait for the disk.
        { lazyCommit: true },
      ),
    );
  }

  function serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = queue.then(fn);
    queue = run.catch(() => {});
    return run;
  }

  async function drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const r = await serial(round);
      total += r.published;
      lockBusy = r.busy;
      // Failed rows now back off, so another round would find nothing due. A round that claimed
      // less than a batch saw every row committed before it: a later commit wakes the relay
      // again (onOutboxCommit, or notify()), so an extra round to find nothing is not needed.
      if (r.published === 0 || r.failed > 0 || !r.full) return total;
    }
  }

  async function purge(): Promise<void> {
    if (Date.now() - lastPurge < PURGE_EVERY_MS) return;
    lastPurge = Date.now();
    const purged = await serial(() => untraced(() => purgeExpired(db, clock)));
    if (purged.outbox + purged.processedEvents + purged.idempotencyKeys > 0) logger.debug({ purged }, "outbox: purged");
  }

  function schedule(ms: number): void {
    if (stopped) return;
    clearTimeout(timer);
    // A commit's wake-up runs inside the RPC that committed: its rounds must not inherit that RPC's deadline.
    timer = outsideCall(() => setTimeout(tick, ms));
    // Polling alone must not keep a process alive that is otherwise done.
    timer.unref();
  }

  function tick(): void {
    timer = undefined;
    notified = false;
    running = drain()
      .then((published) => {
        if (published > 1) lastBusyAt = Date.now();
      })
      .then(purge)
      .then(
        () => {
          if (dbDown) logger.info("outbox: database reachable again");
          dbDown = false;
        },
        (err: unknown) => {
          if (!dbDown) logger.error({ err }, "outbox: relay round failed; retrying");
          dbDown = true;
        },
      )
      .finally(() => {
        running = undefined;
        // Rows backing off and an unreachable database are polled for; otherwise commits wake us.
        schedule(
          notified ? lingered() : lockBusy ? LOCK_BUSY_RETRY_MS : busDown || dbDown ? intervalMs : idleIntervalMs,
        );
      });
  }

  /** How long a round asked for now waits: until lingerMs after the last busy round. */
  function lingered(): number {
    return Math.max(0, lastBusyAt + lingerMs - Date.now());
  }

  function wake(): void {
    if (running) notified = true;
    else schedule(lingered());
  }

  schedule(0);
  const stopWaking = onOutboxCommit(s, wake);

  return {
    drain,
    notify: wake,
    async stop() {
      stopped = true;
      stopWaking();
      stopObserving();
      clearTimeout(timer);
      await running;
      await queue;
    },
  };
}
