import type { Clock } from "@platform/kit/clock";
import { newId, parseId } from "@platform/kit/ids";
import { problem } from "@platform/kit/problems";
import { checkRecoverySince, type RecoveryRecord, recoverySchedule, recoveryView } from "../domain/recovery.js";
import { deliveryMessage, recoveryMessage } from "../messages.js";
import type { TxStore } from "../store/index.js";
import { ownedSubscription } from "./subscriptions.js";

// What an integrator does when deliveries went wrong: resend one attempt's event, recover every
// event an endpoint missed since a time (and read that recovery's progress). Each write runs in
// the transaction of its Idempotency-Key.

const deliveryNotFound = (subscriptionId: string, id: string) =>
  problem("webhook-delivery-not-found", `Delivery ${id} of subscription ${subscriptionId} was not found.`);

const recoveryNotFound = (subscriptionId: string, id: string) =>
  problem("webhook-recovery-not-found", `Recovery ${id} of subscription ${subscriptionId} was not found.`);

/**
 * A new single-shot attempt of the event of an earlier attempt, due now: the same webhook-id
 * and body, through the worker's signer and connect-time address check like any attempt.
 * Another org's subscription or delivery is as unknown as a missing one (404).
 */
export async function resendDelivery(
  w: TxStore,
  clock: Clock,
  cmd: { orgId: string; subscriptionId: string; deliveryId: string },
) {
  const subscription = await ownedSubscription(w, cmd.orgId, cmd.subscriptionId);
  const original = await w.findAttempt(subscription.id, cmd.deliveryId);
  if (!original) throw deliveryNotFound(subscription.id, cmd.deliveryId);
  const now = clock.now();
  const attempt = {
    id: newId("wd_"),
    subscriptionId: subscription.id,
    eventId: original.eventId,
    attempt: await w.nextAttemptNumber(subscription.id, original.eventId),
    trigger: "redeliver" as const,
    status: "pending" as const,
    scheduledAt: now,
    attemptedAt: null,
    responseStatus: null,
    durationMs: null,
    error: null,
    nextRetryAt: null,
    retryStep: null,
    createdAt: now,
  };
  await w.insertAttempt(attempt);
  return { delivery: deliveryMessage({ ...attempt, eventType: original.eventType }) };
}

/**
 * Sends again, once, every event of the subscription since `since` that the endpoint missed:
 * an attempt failed, none succeeded, none is in flight. An event whose retry waits (not due
 * yet) has that attempt taken over, due now and single-shot; one whose attempts ran out gets a
 * new one. In event order (due a millisecond apart), under the subscription's row lock: two
 * recovers of one subscription serialise, and the second finds the first running (409
 * webhook-recovery-in-progress). Once it completed, what it delivered has a success and is
 * skipped by the next one, so no event is delivered twice by recovering.
 */
export async function recoverDeliveries(
  w: TxStore,
  clock: Clock,
  cmd: { orgId: string; subscriptionId: string; since: Date | undefined },
) {
  const now = clock.now();
  const since = checkRecoverySince(cmd.since, now);
  const subscription = await ownedSubscription(w, cmd.orgId, cmd.subscriptionId, true);
  const running = await w.runningRecovery(subscription.id);
  if (running) {
    throw problem(
      "webhook-recovery-in-progress",
      `Recovery ${running} of subscription ${subscription.id} is still running; wait for it to complete.`,
      { recoveryId: running },
    );
  }
  const missed = await w.missedEvents(subscription.id, since, now);
  const due = recoverySchedule(missed.length, now);
  const recovery: RecoveryRecord = {
    id: newId("wrc_"),
    orgId: cmd.orgId,
    subscriptionId: subscription.id,
    since,
    queued: 0,
    createdAt: now,
  };
  await w.insertRecovery(recovery);
  const scheduled = missed.map((m, i) => ({ ...m, scheduledAt: due[i] ?? now }));
  const waiting = scheduled.flatMap((m) => (m.pendingId ? [{ id: m.pendingId, scheduledAt: m.scheduledAt }] : []));
  const exhausted = scheduled.flatMap((m) =>
    m.pendingId ? [] : [{ id: newId("wd_"), eventId: m.eventId, scheduledAt: m.scheduledAt }],
  );
  // A waiting retry a worker claimed meanwhile is in flight: not the recovery's, not counted.
  const queued =
    (await w.takeOverAttempts(recovery.id, waiting, now)) + (await w.queueRecoveryAttempts(recovery, exhausted));
  if (queued > 0) await w.setRecoveryQueued(recovery.id, queued);
  const progress = { pending: queued, succeeded: 0, failed: 0, lastAttemptedAt: null };
  return { recovery: recoveryMessage(recoveryView({ ...recovery, queued }, progress)) };
}

/** A recovery of the org's subscription with its progress; unknown or another org's: 404. */
export async function getRecovery(
  r: Pick<TxStore, "findSubscription" | "findRecovery">,
  cmd: { orgId: string; subscriptionId: string; recoveryId: string },
) {
  const subscription = await ownedSubscription(r, cmd.orgId, cmd.subscriptionId);
  const id = parseId("wrc_", cmd.recoveryId, "recoveryId");
  const found = await r.findRecovery(subscription.id, id);
  if (!found) throw recoveryNotFound(subscription.id, id);
  return { recovery: recoveryMessage(recoveryView(found.recovery, found.progress)) };
}
