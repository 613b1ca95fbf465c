import { trace } from "@opentelemetry/api";
import type { Subscription } from "@platform/kit/bus";
import type { Clock } from "@platform/kit/clock";
import type { Db, Queryable } from "@platform/kit/db";
import type { Logger } from "@platform/kit/logger";
import { quietLog } from "@platform/kit/quiet-log";
import type { SecretBox } from "@platform/kit/secret-box";
import { developmentSecretBox } from "../config.js";
import { type ClaimedAttempt, deliveryStore } from "../store/delivery.store.js";
import { deliveryMetrics } from "./metrics.js";
import type { Sender } from "./sender.js";
import { endpointSlots, originOf, type SendingDeps, sendAttempt } from "./sending.js";
import { reportSettled, settleBatch, settlementQueue } from "./settling.js";

/**
 * A worker claims up to this many times an endpoint's cap (and its concurrency), and sends at
 * most the cap at once: the claimed ones wait in memory for a free slot.
 */
const PREFETCH = 2;

export interface WorkerOptions {
  db: Db;
  clock: Clock;
  logger: Logger;
  sender: Sender;
  /** How long a claim lasts: longer than a send may take, so only a dead worker's claims expire. */
  leaseMs: number;
  /** Attempts in flight at once, across endpoints. */
  concurrency: number;
  /**
   * Attempts to one endpoint (scheme, host, port) in flight at once, across workers and
   * subscriptions: a slow or dead receiver holds at most these.
   */
  perEndpoint: number;
  /** Real-time pause between polls when idle. */
  pollMs: number;
  /** Jitter source; tests pin it. */
  random?: () => number;
  /** Opens the sealed signing secrets (WEBHOOK_SECRET_KEY); the development key when omitted (tests). */
  secrets?: SecretBox;
  /**
   * This worker's stable identity across restarts (the static KAFKA_GROUP_INSTANCE_ID), unique
   * per live worker. Its claims carry it, and at start it frees what its previous run still
   * held: after a kill -9 those attempts go out at once instead of after the lease.
   */
  workerId?: string;
  /** How long a subscription's deliveries fail continuously before it is disabled (WEBHOOK_DISABLE_AFTER_MS); 5 days when omitted. */
  disableAfterMs?: number;
}

export interface DeliveryWorker {
  /** One pass: claims the due attempts and sends them; resolves when every send of the pass has been recorded. */
  runOnce(): Promise<number>;
  /** Polls in the background until the returned subscription is closed (which waits for sends in flight). */
  start(): Subscription;
  /** Polls now instead of at the next interval (new attempts were just queued). */
  nudge(): void;
}

/**
 * Sends due attempts from the database. Claims are leased rows (FOR UPDATE SKIP LOCKED), so
 * any number of workers share the work and a worker killed mid-send leaves attempts that
 * another (or its restart) claims once the lease expires: at-least-once, never lost. The
 * sending side is sending.ts, the settling side settling.ts; this is the loop that claims.
 */
export function deliveryWorker(options: WorkerOptions): DeliveryWorker {
  const { db, clock, logger } = options;
  // A pass runs every poll; while the database is down each fails: one line a minute says so.
  const quiet = quietLog(logger);
  const sending: SendingDeps = {
    clock,
    logger,
    sender: options.sender,
    secrets: options.secrets ?? developmentSecretBox(),
    // Instruments are made here, not at import, so they bind to the provider telemetry set up.
    tracer: trace.getTracer("@platform/webhooks"),
    random: options.random ?? Math.random,
  };
  const measured = deliveryMetrics(db, clock);
  const inFlight = new Set<Promise<void>>();
  const slots = endpointSlots(options.perEndpoint, options.concurrency);

  const settleLater = settlementQueue(async (batch) => {
    // The batch's attempts are still in flight until it resolves: their slots are free again.
    const capacity = options.concurrency * PREFETCH - inFlight.size + batch.length;
    return exclusive(() =>
      db.tx(
        async (q) => {
          const settled = await settleBatch(q, batch, options.disableAfterMs);
          // Claiming in the same transaction as the settlement saves a round trip per batch:
          // the endpoints' slots the batch freed are taken again at once.
          return [settled, stopped ? [] : await claim(q, capacity)] as const;
        },
        // Lost in a database crash, an outcome or a lease only makes an attempt go out again
        // (at least once, the webhook-id unchanged): the commit need not wait for the disk.
        { lazyCommit: true },
      ),
    );
  }, launch);

  /** Sends one attempt and records its outcome; `sent` is called once the endpoint answered (or failed). */
  async function deliver(claimed: ClaimedAttempt, sent: () => void): Promise<void> {
    const done = await sendAttempt(sending, claimed, sent);
    reportSettled(logger, measured, done, await settleLater(done));
  }

  function claim(q: Queryable, capacity: number, prefetch = PREFETCH): Promise<ClaimedAttempt[]> {
    if (capacity <= 0) return Promise.resolve([]);
    const now = clock.now();
    return deliveryStore(q).claimDue(
      now,
      new Date(now.getTime() + options.leaseMs),
      capacity,
      options.perEndpoint * prefetch,
      options.workerId,
    );
  }

  // Claims of one worker never overlap: two at once would each count the endpoints' slots
  // without the other's, and could together pass the cap.
  let claims: Promise<unknown> = Promise.resolve();
  function exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const result = claims.then(fn);
    claims = result.catch(() => {});
    return result;
  }

  /** Queues claimed attempts for sending; each counts as claimed until its outcome is recorded. */
  function launch(claimed: readonly ClaimedAttempt[]): Promise<void>[] {
    const sends = claimed.map((c) => {
      const origin = originOf(c.subscription.endpointUrl);
      const p = slots
        .take(origin)
        .then(() => {
          // Exactly once, whether the send ended or deliver failed before it.
          let free = true;
          const release = () => {
            if (free) slots.free(origin);
            free = false;
          };
          return deliver(c, release).finally(release);
        })
        .catch((err: unknown) => {
          // The lease expires and another pass retries the attempt.
          logger.error({ err, attemptId: c.attempt.id }, "webhook attempt could not be recorded");
        });
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
      return p;
    });
    slots.pump();
    return sends;
  }

  async function pass(capacity: number, prefetch = PREFETCH): Promise<Promise<void>[]> {
    if (capacity <= 0) return [];
    // The claim is one statement: committed lazily on its own (a lease lost in a database crash
    // only sends an attempt again), one round trip instead of BEGIN, claim and COMMIT.
    return launch(await exclusive(() => claim(db.lazy, capacity, prefetch)));
  }

  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let stopped = true;
  let again = false;
  let releaseOwn = true;

  async function tick(): Promise<void> {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      if (releaseOwn && options.workerId) {
        // Before the first claim: what this identity still holds was claimed by a run that died.
        const freed = await exclusive(() => deliveryStore(db).releaseLeases(options.workerId as string));
        releaseOwn = false;
        if (freed > 0)
          logger.info({ freed, workerId: options.workerId }, "freed the attempts a previous run of this worker held");
      }
      do {
        again = false;
        // A finished batch of sends claims the slots it freed itself (settleWaiting).
        await pass(options.concurrency * PREFETCH - inFlight.size);
      } while (again && !stopped);
      quiet.recovered("delivery.pass", "webhook delivery passes succeed again");
    } catch (err) {
      quiet.failure("delivery.pass", err, "webhook delivery pass failed", "error");
    } finally {
      running = false;
    }
    if (!stopped) schedule(options.pollMs);
  }

  function schedule(ms: number): void {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => void tick(), ms);
  }

  return {
    async runOnce() {
      // One pass claims no more than it sends at once.
      const sends = await pass(options.concurrency, 1);
      await Promise.all(sends);
      return sends.length;
    },
    start() {
      stopped = false;
      schedule(0);
      return {
        close: async () => {
          stopped = true;
          if (timer) clearTimeout(timer);
          while (running) await new Promise((r) => setTimeout(r, 10));
          await Promise.all([...inFlight]);
        },
      };
    },
    nudge() {
      if (!stopped) schedule(0);
    },
  };
}
