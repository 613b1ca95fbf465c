import { WebhookSubscriptionService } from "@platform/contracts/webhooks";
import type { BusMessage, ConsumedMessage, EventBus, SubscribeOptions } from "@platform/kit/bus";
import { ManualClock } from "@platform/kit/clock";
import type { Db } from "@platform/kit/db";
import { newId } from "@platform/kit/ids";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFanOut } from "../src/delivery/fan-out.js";
import { publicEventId } from "../src/domain/event-log.js";
import { build } from "../src/server.js";
import { CURSOR_SECRET, callerOf, meeting, openTestDb, publishMeetingEvent, silentLogger } from "./builders.js";

// The fan-out over a batch (what the Kafka bus hands over when the consumer is behind): one
// transaction for the batch, with the same outcome as one message at a time.
const BOOKED = "scheduling.smartscheduler.booked";
const clock = new ManualClock("2026-01-15T12:00:00Z");

/** A bus that keeps what is published and hands it to the subscriber's batchHandler on demand. */
class BatchingBus implements EventBus {
  published: ConsumedMessage[] = [];
  options: SubscribeOptions | undefined;
  async publish(topic: string, messages: BusMessage[]): Promise<void> {
    for (const m of messages) this.published.push({ ...m, topic, partition: 0, offset: String(this.published.length) });
  }
  async subscribe(options: SubscribeOptions) {
    this.options = options;
    return { close: async () => {} };
  }
  async close(): Promise<void> {}
  deliver(messages: ConsumedMessage[]): Promise<void> {
    const handle = this.options?.batchHandler;
    if (!handle) throw new Error("the fan-out subscribed without a batch handler");
    return handle(messages);
  }
}

let db: Db;
let closeDb: () => Promise<void>;
const bus = new BatchingBus();

beforeAll(async () => {
  const t = await openTestDb();
  db = t.db;
  closeDb = () => t.pglite.close();
  await startFanOut({ db, bus, clock, logger: silentLogger });
});
afterAll(() => closeDb());

describe("the fan-out over a batch", () => {
  it("queues each event once per subscription and logs each org's events in their order, once, however often the batch comes", async () => {
    const [a, b] = [newId("org_"), newId("org_")];
    const { routes } = build({ db, clock, cursorSecret: CURSOR_SECRET, allowPrivateTargets: true });
    const sub = await callerOf(routes, clock)(WebhookSubscriptionService, a).createWebhookSubscription({
      endpointUrl: "http://127.0.0.1:9/hooks",
      events: [BOOKED],
    });
    // Interleaved orgs; org b has no subscription, so its event is only logged.
    const ids: string[] = [];
    for (const org of [b, a, b, a, a])
      ids.push(await publishMeetingEvent(bus, "booked", meeting(org), { at: clock.now() }));
    const [first] = bus.published;
    if (!first) throw new Error("nothing published");
    // The same message twice in one batch (a producer's retry) counts once.
    const batch = [...bus.published, first];

    await bus.deliver(batch);
    await bus.deliver(batch); // redelivered after a rebalance: nothing new

    const logged = await db.query<{ org_id: string; position: number; id: string }>(
      "SELECT org_id, position, id FROM webhooks.event_log ORDER BY org_id, position",
    );
    const orgOf = [b, a, b, a, a];
    const expected = (org: string) =>
      ids.filter((_, i) => orgOf[i] === org).map((id, i) => ({ org_id: org, position: i + 1, id: publicEventId(id) }));
    expect(logged.filter((r) => r.org_id === a)).toEqual(expected(a));
    expect(logged.filter((r) => r.org_id === b)).toEqual(expected(b));

    const attempts = await db.query<{ event_id: string; subscription_id: string; status: string }>(
      "SELECT event_id, subscription_id, status FROM webhooks.attempts ORDER BY event_id",
    );
    expect(attempts).toEqual(
      ids
        .filter((_, i) => orgOf[i] === a)
        .map((id) => ({ event_id: publicEventId(id), subscription_id: sub.subscription?.id, status: "pending" }))
        .sort((x, y) => (x.event_id < y.event_id ? -1 : 1)),
    );
  });
});
