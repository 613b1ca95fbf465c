import { context, metrics, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { Subscription } from "@platform/kit/bus";
import type { Clock } from "@platform/kit/clock";
import type { Db } from "@platform/kit/db";
import { newId } from "@platform/kit/ids";
import type { Logger } from "@platform/kit/logger";
import { quietLog } from "@platform/kit/quiet-log";
import type { SecretBox } from "@platform/kit/secret-box";
import { developmentSecretBox } from "../config.js";
import { renderPayload } from "../domain/payload.js";
import { type AttemptOutcome, settle, verdictOf } from "../domain/retry.js";
import { signatureHeaders } from "../domain/signature.js";
import { type ClaimedAttempt, type Completion, webhooksStore } from "../store/webhooks.store.js";
import type { Sender } from "./sender.js";

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
export function deliveryWorker(options: WorkerOptions): DeliveryWorker {
  const { db, clock, logger, sender } = options;
  // A pass runs every poll; while the database is down each fails: one line a minute says so.
  const quiet = quietLog(logger);
  const secrets = options.secrets ?? developmentSecretBox();
  // Instruments are made here, not at import, so they bind to the provider telemetry set up.
  const tracer = trace.getTracer("@platform/webhooks");
  const outcomes = metrics.getMeter("@platform/webhooks").createCounter("webhooks.delivery.outcomes", {
    description:
      "Webhook delivery attempts by outcome (succeeded, retry, gave-up, gone, disabled:<reason>) and event type",
  });
  const random = options.random ?? Math.random;
  const inFlight = new Set<Promise<void>>();

  async function deliver(claimed: ClaimedAttempt): Promise<void> {
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
    // Settled against the subscription as it is now, under its lock (not as it was at the
    // claim): attempts of one subscription finishing together each see the failure run the
    // previous one left, and one that finds it disabled meanwhile schedules no retry.
    const completion = await db.tx(async (q): Promise<Completion | undefined> => {
      const store = webhooksStore(q);
      const state = await store.lockForSettlement(subscription.id);
      // Deleted meanwhile: its attempts went with it.
      if (!state) return undefined;
      const settled = settle(verdict, state, sentAt);
      const c: Completion = {
        status: verdict.kind === "succeeded" ? "succeeded" : "failed",
        attemptedAt: sentAt,
        responseStatus: outcome.status ?? null,
        durationMs: outcome.durationMs,
        error: outcome.error ?? null,
        ...settled,
      };
      return (await store.complete(claimed, c, newId("wd_"))) ? c : undefined;
    });
    let settledKind: string = verdict.kind;
    if (completion?.disable) settledKind = `disabled:${completion.disable}`;
    // A retry the subscription's state withheld (it is disabled): the event ends here for it.
    else if (completion && verdict.kind === "retry" && !completion.retryAt) settledKind = "gave-up";
    outcomes.add(1, { "webhook.event_type": event.type, outcome: settledKind });
    const log = { attemptId: attempt.id, subscriptionId: subscription.id, eventId: event.id, status: outcome.status };
    if (!completion) logger.warn(log, "webhook attempt outcome dropped: its lease expired or its subscription is gone");
    else if (completion.disable) logger.warn({ ...log, reason: completion.disable }, "webhook subscription disabled");
    else if (completion.status === "failed")
      logger.info({ ...log, error: outcome.error, retryAt: completion.retryAt }, "webhook attempt failed");
  }

  async function pass(capacity: number): Promise<Promise<void>[]> {
    if (capacity <= 0) return [];
    const now = clock.now();
    const claimed = await db.tx((q) =>
      webhooksStore(q).claimDue(now, new Date(now.getTime() + options.leaseMs), capacity, options.perEndpoint),
    );
    return claimed.map((c) =>
      deliver(c).catch((err: unknown) => {
        // The lease expires and another pass retries the attempt.
        logger.error({ err, attemptId: c.attempt.id }, "webhook attempt could not be recorded");
      }),
    );
  }

  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let stopped = true;
  let again = false;

  async function tick(): Promise<void> {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        for (const p of await pass(options.concurrency - inFlight.size)) {
          inFlight.add(p);
          void p.finally(() => {
            inFlight.delete(p);
            // A finished send frees capacity and may have queued a retry that is already due.
            if (!stopped) schedule(0);
          });
        }
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
      const sends = await pass(options.concurrency);
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
