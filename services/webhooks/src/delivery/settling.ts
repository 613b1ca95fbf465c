// The delivery worker's settling side: sent attempts recorded in batches (group commit) against
// their subscriptions' current state, and each settled outcome counted and logged.

import type { Queryable } from "@platform/kit/db";
import { newId } from "@platform/kit/ids";
import type { Logger } from "@platform/kit/logger";
import { subscriptionDisabledEvent } from "../application/health.js";
import { type FailureRun, settle } from "../domain/retry.js";
import { type ClaimedAttempt, type Completion, deliveryStore } from "../store/delivery.store.js";
import { txStore } from "../store/index.js";
import type { DeliveryMetrics } from "./metrics.js";
import type { Sent } from "./sending.js";

/** Attempts settled in one transaction at most. */
const SETTLE_BATCH = 500;

/**
 * Settled against the subscriptions as they are now, under their locks (not as they were at
 * the claim), in the order the attempts finished: attempts of one subscription each see the
 * failure run the previous one left, and one that finds it disabled meanwhile schedules no
 * retry. An attempt whose lease was lost (another worker took it over) writes nothing.
 */
export async function settleBatch(
  q: Queryable,
  batch: readonly Sent[],
  disableAfterMs?: number,
): Promise<(Completion | undefined)[]> {
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
    const settled = settle(verdict, state, sentAt, disableAfterMs);
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
  // The platform disabled these (each was enabled under its lock): webhooks.subscription.disabled
  // through the outbox of this same transaction, for the org's log and its other subscriptions.
  for (const [subscriptionId, { disable, at }] of runs) {
    const subscription = batch.find((b) => b.claimed.subscription.id === subscriptionId)?.claimed.subscription;
    if (disable && subscription) await txStore(q).enqueue(subscriptionDisabledEvent(subscription, disable, at));
  }
  return completions;
}

/** One batch settled (`settleBatch`), and the attempts claimed in the same transaction. */
export type SettleRound = (batch: readonly Sent[]) => Promise<readonly [(Completion | undefined)[], ClaimedAttempt[]]>;

/**
 * Settles a sent attempt together with the others that finished meanwhile: one transaction
 * per batch (group commit), so the database costs a few statements per batch, not a
 * transaction per attempt. A batch starts as soon as the previous one committed; nothing
 * waits for a timer. `launch` is given what each round claimed.
 */
export function settlementQueue(
  round: SettleRound,
  launch: (claimed: ClaimedAttempt[]) => void,
): (sent: Sent) => Promise<Completion | undefined> {
  interface Waiting extends Sent {
    resolve: (c: Completion | undefined) => void;
    reject: (err: unknown) => void;
  }
  let waiting: Waiting[] = [];
  let settling = false;

  async function settleWaiting(): Promise<void> {
    while (waiting.length > 0) {
      const batch = waiting.slice(0, SETTLE_BATCH);
      waiting = waiting.slice(batch.length);
      try {
        const [completions, next] = await round(batch);
        for (const [i, w] of batch.entries()) w.resolve(completions[i]);
        launch(next);
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    // In the same synchronous step as the emptiness check: an attempt queued after it starts a new loop.
    settling = false;
  }

  return (sent) =>
    new Promise((resolve, reject) => {
      waiting.push({ ...sent, resolve, reject });
      if (!settling) {
        settling = true;
        void settleWaiting();
      }
    });
}

/** Counts a settled attempt by outcome and logs what an operator should see. */
export function reportSettled(
  logger: Logger,
  measured: DeliveryMetrics,
  { claimed, verdict, outcome, sentAt }: Sent,
  completion: Completion | undefined,
): void {
  const { attempt, subscription, event } = claimed;
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
