// The delivery worker's sending side: the per-endpoint slots claimed attempts wait for, and
// one attempt rendered, signed and POSTed inside its span, with the verdict on its outcome.
// Recording the outcome is the settling side's (settling.ts).
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import type { Clock } from "@platform/kit/clock";
import type { Logger } from "@platform/kit/logger";
import type { SecretBox } from "@platform/kit/secret-box";
import { endpointOrigin } from "../domain/endpoint.js";
import { renderPayload } from "../domain/payload.js";
import { type AttemptOutcome, type Verdict, verdictOf } from "../domain/retry.js";
import { signatureHeaders } from "../domain/signature.js";
import type { ClaimedAttempt } from "../store/delivery.store.js";
import type { Sender } from "./sender.js";

/** A sent attempt, as the settling side records it. */
export interface Sent {
  claimed: ClaimedAttempt;
  verdict: Verdict;
  outcome: AttemptOutcome & { durationMs: number };
  sentAt: Date;
}

/** What sending an attempt needs. */
export interface SendingDeps {
  clock: Clock;
  logger: Logger;
  sender: Sender;
  secrets: SecretBox;
  tracer: Tracer;
  /** Jitter source for the retry's delay. */
  random: () => number;
}

/** An invalid URL fails at sending; until then it is an endpoint of its own. */
export function originOf(url: string): string {
  try {
    return endpointOrigin(url);
  } catch {
    return url;
  }
}

/**
 * Sends one attempt and judges its outcome; `sent` is called once the endpoint answered (or
 * failed), before the verdict, so the endpoint's slot frees before the outcome is recorded.
 */
export async function sendAttempt(deps: SendingDeps, claimed: ClaimedAttempt, sent: () => void): Promise<Sent> {
  const { attempt, subscription, event } = claimed;
  const { clock, logger, secrets, tracer } = deps;
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
    // A test delivery is marked in its body (`"test": true`), so a receiver can tell.
    const body = renderPayload(event, subscription.payloadVersion, { test: attempt.trigger === "test" });
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
      deps.sender({ url: subscription.endpointUrl, headers, body }),
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
  const verdict = verdictOf(
    outcome,
    { number: attempt.retryStep ?? 0, retries: attempt.retryStep !== null },
    clock.now(),
    deps.random,
  );
  return { claimed, verdict, outcome, sentAt };
}

/** Slots of sending: at most `perEndpoint` attempts to one endpoint and `concurrency` in all at once. */
export interface EndpointSlots {
  /**
   * Queues for a slot of `origin`: resolves once `pump` gave the caller one; `free(origin)`
   * gives it back. Queue a whole claim, then pump once.
   */
  take(origin: string): Promise<void>;
  /** Hands free slots to the attempts waiting for them. */
  pump(): void;
  free(origin: string): void;
}

// Claimed attempts wait here per endpoint until one of its slots is free: a worker claims more
// than the cap, so the next send starts the moment one ends, while the settlement of those that
// ended (and the claim that refills) runs alongside.
export function endpointSlots(perEndpoint: number, concurrency: number): EndpointSlots {
  const ready = new Map<string, (() => void)[]>();
  const sending = new Map<string, number>();
  let sendingTotal = 0;

  function pump(): void {
    for (const [origin, queue] of ready) {
      while (queue.length > 0 && (sending.get(origin) ?? 0) < perEndpoint && sendingTotal < concurrency) {
        sending.set(origin, (sending.get(origin) ?? 0) + 1);
        sendingTotal++;
        queue.shift()?.();
      }
      if (queue.length === 0) ready.delete(origin);
    }
  }

  return {
    take: (origin) => {
      return new Promise<void>((start) => {
        const queue = ready.get(origin);
        if (queue) queue.push(start);
        else ready.set(origin, [start]);
      });
    },
    pump,
    free: (origin) => {
      const left = (sending.get(origin) ?? 1) - 1;
      if (left > 0) sending.set(origin, left);
      else sending.delete(origin);
      sendingTotal--;
      pump();
    },
  };
}
