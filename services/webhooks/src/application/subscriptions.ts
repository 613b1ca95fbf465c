import type { Clock } from "@platform/kit/clock";
import { findById, newId } from "@platform/kit/ids";
import { problem } from "@platform/kit/problems";
import type { SecretBox } from "@platform/kit/secret-box";
import { pendingAttempt } from "../domain/attempt.js";
import { checkEvents, TEST_EVENT_TYPE } from "../domain/catalog.js";
import { checkEndpoint, type EndpointPolicy } from "../domain/endpoint.js";
import { healthOf, NO_ATTEMPTS } from "../domain/health.js";
import type { AttemptRecord, SubscriptionRecord } from "../domain/model.js";
import { newSecret } from "../domain/signature.js";
import { exampleData } from "../domain/test-events.js";
import { deliveryMessage, subscriptionMessage } from "../messages.js";
import type { TxStore } from "../store/index.js";
import { healthOfAll } from "./health.js";

// The subscription use cases, each inside the transaction of its Idempotency-Key: creating
// and changing a subscription (its fields checked before the transaction), re-keying it, and
// queueing the single-shot attempts of a test ping or a redelivery.

/** How long a rotated-out secret keeps signing, next to the new one. */
export const SECRET_GRACE_MS = 24 * 3_600_000;

export interface SubscriptionUseCaseDeps {
  clock: Clock;
  /** Seals the signing secrets: rows and stored answers hold them sealed. */
  secrets: SecretBox;
}

const MAX_DESCRIPTION = 500;

async function validEndpoint(raw: string, policy: EndpointPolicy): Promise<string> {
  const checked = await checkEndpoint(raw, policy);
  if (!checked.ok) throw problem("webhook-endpoint-invalid", checked.reason, { field: "endpointUrl" });
  return raw;
}

function validEvents(events: readonly string[]): string[] {
  const checked = checkEvents(events);
  if (!checked.ok) throw problem("webhook-events-invalid", checked.reason, { field: "events" });
  return checked.events;
}

function validDescription(raw: string | undefined): string | null {
  if (raw === undefined || raw.trim() === "") return null;
  if ([...raw].length > MAX_DESCRIPTION) {
    throw problem("invalid-field", `description must be at most ${MAX_DESCRIPTION} characters.`, {
      field: "description",
    });
  }
  return raw;
}

export const subscriptionNotFound = (id: string) =>
  problem("webhook-subscription-not-found", `Webhook subscription ${id} was not found.`);

/** A subscription of the org (another org's is as absent as an unknown one); `lock` holds it until the transaction ends. */
export function ownedSubscription(
  reads: Pick<TxStore, "findSubscription">,
  orgId: string,
  rawId: string,
  lock = false,
): Promise<SubscriptionRecord> {
  const find = (id: string) => reads.findSubscription(orgId, id, lock);
  return findById("sub_", rawId, "subscriptionId", find, subscriptionNotFound);
}

/** Queues a single-shot attempt of an event, due now. */
async function queueAttempt(
  w: TxStore,
  clock: Clock,
  subscription: SubscriptionRecord,
  event: { id: string; type: string },
  trigger: "redeliver" | "test",
): Promise<AttemptRecord> {
  const now = clock.now();
  const attempt = pendingAttempt({
    id: newId("wd_"),
    subscriptionId: subscription.id,
    event,
    attempt: await w.nextAttemptNumber(subscription.id, event.id),
    trigger,
    retryStep: null,
    now,
  });
  await w.insertAttempt(attempt);
  return attempt;
}

/** A new subscription as the call names it, not checked yet. */
export interface NewSubscription {
  orgId: string;
  endpointUrl: string;
  events: readonly string[];
  description: string | undefined;
}

/**
 * Creates a subscription with its first secret (sealed in the answer too; the handler opens it
 * for the client). Its fields are checked before `write`, the transaction of the call's key:
 * resolving the endpoint's host must not hold a connection.
 */
export async function createSubscription<R>(
  deps: SubscriptionUseCaseDeps & { endpoints: EndpointPolicy },
  cmd: NewSubscription,
  write: (insert: (w: TxStore) => ReturnType<typeof insertSubscription>) => Promise<R>,
): Promise<R> {
  const endpointUrl = await validEndpoint(cmd.endpointUrl, deps.endpoints);
  const events = validEvents(cmd.events);
  const description = validDescription(cmd.description);
  const secret = newSecret();
  // Sealed in the idempotency record too; opened by the handler for this answer and for replays.
  return write((w) => insertSubscription(w, deps, { orgId: cmd.orgId, endpointUrl, events, description, secret }));
}

async function insertSubscription(
  w: TxStore,
  deps: SubscriptionUseCaseDeps,
  cmd: { orgId: string; endpointUrl: string; events: string[]; description: string | null; secret: string },
) {
  const now = deps.clock.now();
  const subscription: SubscriptionRecord = {
    id: newId("sub_"),
    orgId: cmd.orgId,
    endpointUrl: cmd.endpointUrl,
    events: cmd.events,
    description: cmd.description,
    enabled: true,
    // Every subscription created through this API version receives the canonical Meeting.
    payloadVersion: "v2",
    secret: deps.secrets.seal(cmd.secret),
    previousSecret: null,
    previousSecretExpiresAt: null,
    disabledReason: null,
    disabledAt: null,
    failingSince: null,
    lastFailureAt: null,
    createdAt: now,
    updatedAt: now,
  };
  await w.insertSubscription(subscription);
  // New: no attempt yet.
  const health = healthOf(subscription, NO_ATTEMPTS);
  return { subscription: subscriptionMessage(subscription, now, health), secret: subscription.secret };
}

/** A PATCH of a subscription as the call names it, not checked yet: undefined keeps a value. */
export interface SubscriptionChange {
  orgId: string;
  id: string;
  endpointUrl: string | undefined;
  events: readonly string[] | undefined;
  description: string | undefined;
  enabled: boolean | undefined;
}

/** Changes a subscription; the fields it names are checked before `write`, as on create. */
export async function changeSubscription<R>(
  deps: { clock: Clock; endpoints: EndpointPolicy },
  cmd: SubscriptionChange,
  write: (update: (w: TxStore) => ReturnType<typeof updateSubscription>) => Promise<R>,
): Promise<R> {
  const endpointUrl = cmd.endpointUrl === undefined ? undefined : await validEndpoint(cmd.endpointUrl, deps.endpoints);
  const events = cmd.events === undefined ? undefined : validEvents(cmd.events);
  const description = cmd.description === undefined ? undefined : validDescription(cmd.description);
  return write((w) => updateSubscription(w, deps.clock, { ...cmd, endpointUrl, events, description }));
}

/** A PATCH of a subscription: undefined keeps a value. */
interface UpdateSubscription {
  orgId: string;
  id: string;
  endpointUrl: string | undefined;
  events: string[] | undefined;
  description: string | null | undefined;
  enabled: boolean | undefined;
}

/** Changes the subscription; enabling a disabled one starts afresh, disabling one records the user did. */
async function updateSubscription(w: TxStore, clock: Clock, cmd: UpdateSubscription) {
  const { endpointUrl, events, description } = cmd;
  const now = clock.now();
  const current = await ownedSubscription(w, cmd.orgId, cmd.id, true);
  const next: SubscriptionRecord = {
    ...current,
    ...(endpointUrl !== undefined ? { endpointUrl } : {}),
    ...(events !== undefined ? { events } : {}),
    ...(description !== undefined ? { description } : {}),
    updatedAt: now,
  };
  if (cmd.enabled === true && !current.enabled) {
    // A fresh start: the failure run that disabled it no longer counts.
    Object.assign(next, {
      enabled: true,
      disabledReason: null,
      disabledAt: null,
      failingSince: null,
      lastFailureAt: null,
    });
  } else if (cmd.enabled === false && current.enabled) {
    Object.assign(next, { enabled: false, disabledReason: "disabled-by-user", disabledAt: now });
  }
  await w.updateSubscription(next);
  return { subscription: await withHealth(w, clock, next, now) };
}

/** The subscription's message with its health as its attempts show it now. */
async function withHealth(w: TxStore, clock: Clock, s: SubscriptionRecord, now: Date) {
  const health = (await healthOfAll(w, clock, [s])).get(s.id) ?? healthOf(s, NO_ATTEMPTS);
  return subscriptionMessage(s, now, health);
}

/** A new secret; the one it replaces keeps signing for 24 h, one rotated out earlier stops now. */
export async function rotateSecret(w: TxStore, deps: SubscriptionUseCaseDeps, orgId: string, rawId: string) {
  const now = deps.clock.now();
  const current = await ownedSubscription(w, orgId, rawId, true);
  const next: SubscriptionRecord = {
    ...current,
    secret: deps.secrets.seal(newSecret()),
    previousSecret: current.secret,
    previousSecretExpiresAt: new Date(now.getTime() + SECRET_GRACE_MS),
    updatedAt: now,
  };
  await w.updateSubscription(next);
  return { subscription: await withHealth(w, deps.clock, next, now), secret: next.secret };
}

/** The example data of a catalog kind for a test delivery; an unknown kind is 422 webhook-events-invalid. */
function testData(eventType: string, orgId: string, now: Date): unknown {
  const data = exampleData(eventType, orgId, now);
  if (data === undefined) {
    throw problem("webhook-events-invalid", `Not in the event catalog: ${eventType}.`, { field: "eventType" });
  }
  return data;
}

/**
 * Stores a test event for the subscription and queues its delivery; `traceparent` continues the
 * caller's trace. Without `eventType` it is the webhook.test ping; with a catalog kind, an
 * example of that kind (sent to this subscription only, whether or not it names the kind).
 * Either way the attempt's trigger is `test` and the body carries `"test": true`.
 */
export async function sendTestEvent(
  w: TxStore,
  clock: Clock,
  cmd: { orgId: string; subscriptionId: string; traceparent: string | undefined; eventType?: string | undefined },
) {
  const now = clock.now();
  const example = cmd.eventType === undefined ? undefined : testData(cmd.eventType, cmd.orgId, now);
  const subscription = await ownedSubscription(w, cmd.orgId, cmd.subscriptionId);
  const event = {
    id: newId("evt_"),
    orgId: cmd.orgId,
    ...(cmd.traceparent ? { traceparent: cmd.traceparent } : {}),
    type: cmd.eventType ?? TEST_EVENT_TYPE,
    data:
      example ??
      ({
        subscriptionId: subscription.id,
        message: "This is a test event from the Platform Integration API.",
      } as unknown),
    occurredAt: now,
  };
  await w.insertEvent(event);
  return { delivery: deliveryMessage(await queueAttempt(w, clock, subscription, event, "test")) };
}

/** Queues the event of an earlier attempt again, to the same subscription. */
export async function redeliver(
  w: TxStore,
  clock: Clock,
  cmd: { orgId: string; subscriptionId: string; deliveryId: string },
) {
  const subscription = await ownedSubscription(w, cmd.orgId, cmd.subscriptionId);
  const original = await w.findAttempt(subscription.id, cmd.deliveryId);
  if (!original) {
    throw problem(
      "webhook-subscription-not-found",
      `Delivery ${cmd.deliveryId} of subscription ${subscription.id} was not found.`,
    );
  }
  const event = { id: original.eventId, type: original.eventType };
  return { delivery: deliveryMessage(await queueAttempt(w, clock, subscription, event, "redeliver")) };
}
