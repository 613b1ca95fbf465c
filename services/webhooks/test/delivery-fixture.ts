// The world every delivery*.test.ts runs in: one database, the fan-out from an in-process bus, a
// delivery worker on a manual clock, and a fresh receiver per test.
import { type WebhookDelivery, WebhookSubscriptionService } from "@platform/contracts/webhooks";
import { ManualClock } from "@platform/kit/clock";
import type { Db } from "@platform/kit/db";
import { InProcessBus } from "@platform/kit/in-process-bus";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { startFanOut } from "../src/delivery/fan-out.js";
import { httpSender, systemResolver } from "../src/delivery/sender.js";
import { type DeliveryWorker, deliveryWorker } from "../src/delivery/worker.js";
import { build } from "../src/server.js";
import { CURSOR_SECRET, callerOf, openTestDb, type Received, silentLogger, startReceiver } from "./builders.js";

export const BOOKED = "scheduling.smartscheduler.booked";
export const CANCELED = "scheduling.smartscheduler.canceled";
export const clock = new ManualClock("2026-01-15T12:00:00Z");
export const SECOND = 1000;
export const HOUR = 3_600_000;

export let db: Db;
export let bus: InProcessBus;
let closeDb: () => Promise<void>;
export let worker: DeliveryWorker;
export let receiver: Awaited<ReturnType<typeof startReceiver>>;
let api: ReturnType<typeof callerOf>;
let fanOut: { close(): Promise<void> };

export function makeWorker(timeoutMs = 2000, workerId?: string): DeliveryWorker {
  return deliveryWorker({
    ...(workerId ? { workerId } : {}),
    db,
    clock,
    logger: silentLogger,
    sender: httpSender({ allowPrivateTargets: true, resolve: systemResolver, timeoutMs }),
    leaseMs: 30 * SECOND,
    concurrency: 16,
    perEndpoint: 4,
    pollMs: 20,
    random: () => 0.5,
  });
}

/** Registers the hooks that open the world once and start a receiver for each test. */
export function useDeliveryWorld(): void {
  beforeAll(async () => {
    const t = await openTestDb();
    db = t.db;
    closeDb = () => t.pglite.close();
    bus = new InProcessBus({ logger: silentLogger });
    // Unit tests enable private targets explicitly: the receiver is on 127.0.0.1, over http.
    const { routes } = build({ db, clock, cursorSecret: CURSOR_SECRET, allowPrivateTargets: true });
    api = callerOf(routes, clock);
    fanOut = await startFanOut({ db, bus, clock, logger: silentLogger });
    worker = makeWorker();
  });
  afterAll(async () => {
    await fanOut.close();
    await bus.close();
    await closeDb();
  });
  beforeEach(async () => {
    receiver = await startReceiver();
  });
  afterEach(() => receiver.close());
}

export const client = (orgId: string) => api(WebhookSubscriptionService, orgId);

export async function subscribe(orgId: string, events = [BOOKED, CANCELED], url = receiver.url) {
  const res = await client(orgId).createWebhookSubscription({ endpointUrl: url, events });
  return { id: res.subscription?.id ?? "", secret: res.secret };
}

/** Fans out what was published, then runs one worker pass; the number of attempts sent. */
export async function pass(): Promise<number> {
  await bus.idle();
  return worker.runOnce();
}

export async function deliveries(orgId: string, subscriptionId: string): Promise<WebhookDelivery[]> {
  const { deliveries } = await client(orgId).listWebhookDeliveries({ subscriptionId, sort: "createdAt", limit: 100 });
  // A retry is created the instant its predecessor fails, which the manual clock makes a tie.
  return deliveries.sort((a, b) => a.attempt - b.attempt);
}

export const bodyOf = (r: Received | undefined) => JSON.parse(r?.body ?? "null");
