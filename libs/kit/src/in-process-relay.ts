import { context } from "@opentelemetry/api";
import { suppressTracing } from "@opentelemetry/core";
import { type Clock, systemClock } from "./clock.js";
import { DiskFailedError } from "./data-dir-health.js";
import type { Db } from "./db.js";
import { outsideCall } from "./deadline.js";
import { purgeExpired } from "./housekeeping.js";
import type { InProcessBus } from "./in-process-bus.js";
import type { Logger } from "./logger.js";
import { onOutboxCommit, toBusMessage } from "./outbox.js";
import type { OutboxRelay } from "./outbox-relay.js";
import {
  byTopic,
  envelopeOf,
  type OutboxRow,
  observeOutboxLag,
  runsOfSameTrace,
  traceContextOf,
} from "./outbox-rows.js";
import { tracing } from "./tracing.js";

export interface InProcessRelayOptions {
  db: Db;
  bus: InProcessBus;
  logger: Logger;
  /** Polling period, a safety net: every commit of an outbox row wakes the relay at once. */
  idleIntervalMs?: number;
  /** Rows per round. */
  batchSize?: number;
  /** The clock idempotency records are written with, for their hourly purge. */
  clock?: Clock;
}

const PURGE_EVERY_MS = 60 * 60 * 1000;

/**
 * The embedded runtime's outbox relay. The in-process bus keeps messages in memory only, so a
 * row is marked published once every consumer group has handled its event (the bus's
 * `deliver`), not when it is handed over: a process killed in between finds the row still
 * unpublished when it starts again, and delivers it again. Consumers are idempotent by event
 * id, so the events of every committed write reach them at least once and take effect once.
 *
 * Start it after the consumers have subscribed: `deliver` waits for the groups subscribed
 * when it publishes, and a row handed over before its groups exist would be marked at once.
 *
 * Rows are read past the last `seq` handed to the bus in this process, so a row waiting for a
 * slow group is neither handed over twice nor holds up the rows behind it. That relies on
 * `seq` following commit order, which holds here: one process owns the data directory and
 * PGlite runs one transaction at a time.
 */
export function startInProcessRelay(options: InProcessRelayOptions): OutboxRelay {
  const { db, bus, logger } = options;
  const clock = options.clock ?? systemClock;
  const idleIntervalMs = options.idleIntervalMs ?? 1000;
  const batchSize = options.batchSize ?? 100;
  const s = db.schema;
  const stopObserving = observeOutboxLag(db);

  let handedSeq = 0;
  let stopped = false;
  /** A round failed since the last success ("logged": and said so). */
  let failing: boolean | "logged" = false;
  let lastPurge = 0;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let notified = false;
  let queue: Promise<unknown> = Promise.resolve();
  /** Marks being written for delivered rows (not deliveries still waiting): stop waits for them. */
  const marking = new Set<Promise<void>>();

  const untraced = <T>(fn: () => Promise<T>): Promise<T> => context.with(suppressTracing(context.active()), fn);

  function serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = queue.then(fn);
    queue = run.catch(() => {});
    return run;
  }

  /** Marks rows published once the bus says every group handled them. */
  function markWhenDelivered(delivery: Promise<void>, ids: string[]): void {
    delivery.then(
      () => {
        const mark = untraced(() =>
          db.lazy.query(`UPDATE ${s}.outbox SET published_at = now(), last_error = NULL WHERE id = ANY($1::uuid[])`, [
            ids,
          ]),
        ).then(
          () => undefined,
          (err: unknown) => {
            // Delivered but not marked: the next start delivers them again, and consumers skip them.
            if (!stopped) logger.warn({ err, rows: ids.length }, "outbox: marking delivered rows failed");
          },
        );
        marking.add(mark);
        void mark.finally(() => marking.delete(mark));
      },
      // The bus closed first: the rows stay unpublished and go out again at the next start.
      () => {},
    );
  }

  async function round(): Promise<number> {
    const rows = await untraced(() =>
      db.query<OutboxRow & { seq: number }>(
        `SELECT seq, id, topic, key, type, source, subject, time, traceparent, data FROM ${s}.outbox
         WHERE published_at IS NULL AND seq > $1 ORDER BY seq LIMIT $2`,
        [handedSeq, batchSize],
      ),
    );
    const last = rows.at(-1);
    if (!last || stopped) return 0;
    handedSeq = Number(last.seq);
    for (const [topic, list] of byTopic(rows)) {
      // Traced, each request's events go out inside its trace, so the consumers' spans join it.
      for (const run of tracing() ? runsOfSameTrace(list) : [list]) {
        const delivery = context.with(traceContextOf(run[0]?.traceparent ?? null), () =>
          bus.deliver(
            topic,
            run.map((r) => toBusMessage(envelopeOf(r), r.key)),
          ),
        );
        markWhenDelivered(
          delivery,
          run.map((r) => r.id),
        );
      }
    }
    return rows.length;
  }

  async function drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await serial(round);
      total += n;
      if (n < batchSize) return total;
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
    timer.unref();
  }

  function tick(): void {
    timer = undefined;
    notified = false;
    running = drain()
      .then(purge)
      .then(
        () => {
          if (failing === "logged") logger.info("outbox: database reachable again");
          failing = false;
        },
        (err: unknown) => {
          // An unwritable data directory is logged once, by its watch (DiskFailedError).
          if (!failing && !stopped && !(err instanceof DiskFailedError)) {
            logger.error({ err }, "outbox: relay round failed; retrying");
            failing = "logged";
          } else failing ||= true;
        },
      )
      .finally(() => {
        running = undefined;
        schedule(notified ? 0 : idleIntervalMs);
      });
  }

  function wake(): void {
    if (running) notified = true;
    else schedule(0);
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
      // Deliveries still waiting are dropped: their rows stay unpublished for the next start.
      await Promise.all(marking);
    },
  };
}
