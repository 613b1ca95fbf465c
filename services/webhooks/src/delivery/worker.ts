import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { Subscription } from "@platform/kit/bus";
import type { Clock } from "@platform/kit/clock";
import type { Db, Queryable } from "@platform/kit/db";
import { newId } from "@platform/kit/ids";
import type { Logger } from "@platform/kit/logger";
import { quietLog } from "@platform/kit/quiet-log";
import type { SecretBox } from "@platform/kit/secret-box";
import { developmentSecretBox } from "../config.js";
import { endpointOrigin } from "../domain/endpoint.js";
import { renderPayload } from "../domain/payload.js";
import { type AttemptOutcome, type FailureRun, settle, type Verdict, verdictOf } from "../domain/retry.js";
import { signatureHeaders } from "../domain/signature.js";
import { type ClaimedAttempt, type Completion, deliveryStore } from "../store/delivery.store.js";
import { deliveryMetrics } from "./metrics.js";
import type { Sender } from "./sender.js";

/** Attempts settled in one transaction at most. */
const SETTLE_BATCH = 500;
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
 * another (or its restart) claims once the lease expires: at-least-once, never lost.
 */
/** An invalid URL fails at sending; until then it is an endpoint of its own. */
function originOf(url: string): string {
  try {
    return endpointOrigin(url);
  } catch {
    return url;
  }
}

export function deliveryWorker(options: WorkerOptions): DeliveryWorker {
  const { db, clock, logger, sender } = options;
  // A pass runs every poll; while the database is down each fails: one line a minute says so.
  const quiet = quietLog(logger);
  const secrets = options.secrets ?? developmentSecretBox();
  // Instruments are made here, not at import, so they bind to the provider telemetry set up.
  const tracer = trace.getTracer("@platform/webhooks");
  const measured = deliveryMetrics(db, clock);
  const random = options.random ?? Math.random;
  const inFlight = new Set<Promise<void>>();

  /** Sends one attempt and records its outcome; `sent` is called once the endpoint answered (or failed). */
  async function deliver(claimed: ClaimedAttempt, sent: () => void): Promise<void> {
    const { attempt, subscription, event } = claimed;
    let outcome: AttemptOutcome & { durationMs: number };
    const sentAt = clock.now();
    // The delivery continues the trace of the request that caused the event (its outbox row,
    // the Kafka message, and now the POST to the receiver).
    const parent = event.traceparent
      ? propagation.extract(ROOT_CONTEXT, { traceparent: event.traceparent })
      : ROOT_CONTEXT;
    const span = tracer.startSpan(
      `webhook.deliver ${event.type}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          "webhook.subscription_id": subscription.id,
          "webhook.delivery_id": attempt.id,
          "webhook.event_id": event.id,
          "webhook.event_type": event.type,
          "webhook.attempt": attempt.attempt,
        },
      },
      parent,
    );
    try {
      const body = renderPayload(event, subscription.payloadVersion);
      const headers = signatureHeaders(
        {
          secret: secrets.open(subscription.secret),
          previousSecret: subscription.previousSecret && secrets.open(subscription.previousSecret),
          previousSecretExpiresAt: subscription.previousSecretExpiresAt,
        },
        event.id,
        sentAt,
        body,
      );
      outcome = await context.with(trace.setSpan(parent, span), () =>
        sender({ url: subscription.endpointUrl, headers, body }),
      );
    } catch (err) {
      // An event that cannot be rendered will not render on a retry either.
      logger.error({ err, attemptId: attempt.id, eventId: event.id }, "webhook payload could not be built");
      outcome = { status: undefined, retryAfter: undefined, error: "payload could not be built", durationMs: 0 };
    } finally {
      // The endpoint's slot is free now; recording the outcome follows in a batch.
      sent();
    }
    if (outcome.status !== undefined) span.setAttribute("http.response.status_code", outcome.status);
    if (outcome.error) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error });
    span.end();
    const now = clock.now();
    const verdict = verdictOf(
      outcome,
      { number: attempt.retryStep ?? 0, retries: attempt.retryStep !== null },
      now,
      random,
    );
    const completion = await settleLater({ claimed, verdict, outcome, sentAt });
    let settledKind: string = verdict.kind;
    if (completion?.disable) settledKind = `disabled:${completion.disable}`;
    // A retry the subscription's state withheld (it is disabled): the event ends here for it.
    else if (completion && verdict.kind === "retry" && !completion.retryAt) settledKind = "gave-up";
    measured.record({
      eventType: event.type,
      outcome: settledKind,
      durationMs: outcome.durationMs,
      occurredAt: event.occurredAt,
      sentAt,
    });
    const log = { attemptId: attempt.id, subscriptionId: subscription.id, eventId: event.id, status: outcome.status };
    if (!completion) logger.warn(log, "webhook attempt outcome dropped: its lease expired or its subscription is gone");
    else if (completion.disable) logger.warn({ ...log, reason: completion.disable }, "webhook subscription disabled");
    else if (completion.status === "failed")
      logger.info({ ...log, error: outcome.error, retryAt: completion.retryAt }, "webhook attempt failed");
  }

  interface Sent {
    claimed: ClaimedAttempt;
    verdict: Verdict;
    outcome: AttemptOutcome & { durationMs: number };
    sentAt: Date;
  }
  interface Waiting extends Sent {
    resolve: (c: Completion | undefined) => void;
    reject: (err: unknown) => void;
  }
  let waiting: Waiting[] = [];
  let settling = false;

  /**
   * Settles a sent attempt together with the others that finished meanwhile: one transaction
   * per batch (group commit), so the database costs a few statements per batch, not a
   * transaction per attempt. A batch starts as soon as the previous one committed; nothing
   * waits for a timer.
   */
  function settleLater(sent: Sent): Promise<Completion | undefined> {
    return new Promise((resolve, reject) => {
      waiting.push({ ...sent, resolve, reject });
      if (!settling) {
        settling = true;
        void settleWaiting();
      }
    });
  }

  async function settleWaiting(): Promise<void> {
    while (waiting.length > 0) {
      const batch = waiting.slice(0, SETTLE_BATCH);
      waiting = waiting.slice(batch.length);
      try {
        // The batch's attempts are still in flight until it resolves: their slots are free again.
        const capacity = options.concurrency * PREFETCH - inFlight.size + batch.length;
        const [completions, next] = await exclusive(() =>
          db.tx(
            async (q) => {
              const settled = await settleBatch(q, batch);
              // Claiming in the same transaction as the settlement saves a round trip per batch:
              // the endpoints' slots the batch freed are taken again at once.
              return [settled, stopped ? [] : await claim(q, capacity)] as const;
            },
            // Lost in a database crash, an outcome or a lease only makes an attempt go out again
            // (at least once, the webhook-id unchanged): the commit need not wait for the disk.
            { lazyCommit: true },
          ),
        );
        for (const [i, w] of batch.entries()) w.resolve(completions[i]);
        launch(next);
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    // In the same synchronous step as the emptiness check: an attempt queued after it starts a new loop.
    settling = false;
  }

  /**
   * Settled against the subscriptions as they are now, under their locks (not as they were at
   * the claim), in the order the attempts finished: attempts of one subscription each see the
   * failure run the previous one left, and one that finds it disabled meanwhile schedules no
   * retry. An attempt whose lease was lost (another worker took it over) writes nothing.
   */
  async function settleBatch(q: Queryable, batch: readonly Sent[]): Promise<(Completion | undefined)[]> {
    const store = deliveryStore(q);
    const states = await store.lockForSettlement(batch.map((b) => b.claimed.subscription.id));
    const ours = await store.stillLeased(batch.map((b) => b.claimed));
    const runs = new Map<string, { run: FailureRun; disable?: "endpoint-gone" | "failing"; at: Date }>();
    const done: { claimed: ClaimedAttempt; completion: Completion; nextId: string }[] = [];
    const completions = batch.map(({ claimed, verdict, outcome, sentAt }) => {
      const subscriptionId = claimed.subscription.id;
      const state = states.get(subscriptionId);
      // Deleted meanwhile (its attempts went with it), or no longer ours.
      if (!state || !ours.has(claimed.attempt.id)) return undefined;
      const settled = settle(verdict, state, sentAt);
      const completion: Completion = {
        status: verdict.kind === "succeeded" ? "succeeded" : "failed",
        attemptedAt: sentAt,
        responseStatus: outcome.status ?? null,
        durationMs: outcome.durationMs,
        error: outcome.error ?? null,
        ...settled,
      };
      states.set(subscriptionId, { enabled: state.enabled && !settled.disable, run: settled.run });
      const before = runs.get(subscriptionId);
      const disable = before?.disable ?? settled.disable;
      runs.set(subscriptionId, {
        run: settled.run,
        ...(disable ? { disable } : {}),
        at: before?.disable ? before.at : sentAt,
      });
      done.push({ claimed, completion, nextId: newId("wd_") });
      return completion;
    });
    await store.completeAll(done, runs);
    return completions;
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

  // Claimed attempts wait here per endpoint until one of its slots is free: a worker claims up
  // to PREFETCH times the cap, so the next send starts the moment one ends, while the
  // settlement of those that ended (and the claim that refills) runs alongside.
  const ready = new Map<string, (() => void)[]>();
  const sending = new Map<string, number>();
  let sendingTotal = 0;

  function pump(): void {
    for (const [origin, queue] of ready) {
      while (
        queue.length > 0 &&
        (sending.get(origin) ?? 0) < options.perEndpoint &&
        sendingTotal < options.concurrency
      ) {
        sending.set(origin, (sending.get(origin) ?? 0) + 1);
        sendingTotal++;
        queue.shift()?.();
      }
      if (queue.length === 0) ready.delete(origin);
    }
  }

  function sent(origin: string): void {
    const left = (sending.get(origin) ?? 1) - 1;
    if (left > 0) sending.set(origin, left);
    else sending.delete(origin);
    sendingTotal--;
    pump();
  }

  /** Queues claimed attempts for sending; each counts as claimed until its outcome is recorded. */
  function launch(claimed: readonly ClaimedAttempt[]): Promise<void>[] {
    const sends = claimed.map((c) => {
      const origin = originOf(c.subscription.endpointUrl);
      const p = new Promise<void>((start) => {
        const queue = ready.get(origin);
        if (queue) queue.push(start);
        else ready.set(origin, [start]);
      })
        .then(() => {
          // Exactly once, whether the send ended or deliver failed before it.
          let free = true;
          const release = () => {
            if (free) sent(origin);
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
    pump();
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
