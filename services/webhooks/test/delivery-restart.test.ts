import { newId } from "@platform/kit/ids";
import { eventually } from "@platform/kit/testing";
import { describe, expect, it } from "vitest";
import { publicEventId } from "../src/domain/event-log.js";
import { deliveryStore } from "../src/store/delivery.store.js";
import { meeting, publishMeetingEvent } from "./builders.js";
import { bus, clock, db, makeWorker, receiver, SECOND, subscribe, useDeliveryWorld } from "./delivery-fixture.js";

useDeliveryWorld();

// A worker killed mid-send (kill -9) leaves its claims leased; they count against the
// endpoint's cap across workers until they expire. The same worker restarted takes them back.
describe("a delivery worker restarted after a crash", () => {
  it("frees the attempts its previous run held and sends them at once; other workers wait for the lease", async () => {
    const org = newId("org_");
    await subscribe(org);
    const eventId = publicEventId(await publishMeetingEvent(bus, "booked", meeting(org), { at: clock.now() }));
    await bus.idle();
    // The previous run of "delivery-0" claimed the attempt (as many as the endpoint's cap), then died.
    const now = clock.now();
    const claimed = await db.tx((q) =>
      deliveryStore(q).claimDue(now, new Date(now.getTime() + 30 * SECOND), 10, 4, "delivery-0"),
    );
    expect(claimed).toHaveLength(1);

    // Another worker, or one of another identity, leaves a live-looking lease alone.
    expect(await makeWorker(2000, "delivery-1").runOnce()).toBe(0);
    expect(receiver.received).toHaveLength(0);

    // "delivery-0" again: its first pass frees its own claims and sends, 30 s before the lease ends.
    const loop = makeWorker(2000, "delivery-0").start();
    try {
      await eventually("the freed attempt is sent", () => (receiver.received.length > 0 ? true : undefined), 10_000);
    } finally {
      await loop.close();
    }
    expect(receiver.received.map((r) => r.headers["webhook-id"])).toEqual([eventId]);
    const [row] = await db.query<{ status: string; leased_by: string | null }>(
      "SELECT status, leased_by FROM webhooks.attempts WHERE event_id = $1",
      [eventId],
    );
    expect(row).toEqual({ status: "succeeded", leased_by: null });
  });
});
