import { afterEach, describe, expect, it } from "vitest";
import type { ConsumedMessage } from "../src/bus.js";
import type { Db } from "../src/db.js";
import { InProcessBus } from "../src/in-process-bus.js";
import { startInProcessRelay } from "../src/in-process-relay.js";
import { decodeEvent, enqueueEvent } from "../src/outbox.js";
import type { OutboxRelay } from "../src/outbox-relay.js";
import { eventually, freshKitDbEachTest, silentLogger, within } from "./helpers.js";

const n = (m: ConsumedMessage) => (decodeEvent(m).data as { n: number }).n;

/** A promise and the function that settles it. */
function gate(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describe("InProcessBus.deliver", () => {
  it("resolves once every group subscribed to the topic has handled the messages", async () => {
    const bus = new InProcessBus();
    const slow = gate();
    const seen: string[] = [];
    await bus.subscribe({ groupId: "fast", topics: ["t"], handler: async () => void seen.push("fast") });
    await bus.subscribe({
      groupId: "slow",
      topics: ["t"],
      handler: async () => {
        await slow.opened;
        seen.push("slow");
      },
    });
    let delivered = false;
    const delivery = bus.deliver("t", [{ key: "k", value: Buffer.from("1"), headers: {} }]).then(() => {
      delivered = true;
    });
    await eventually("the fast group", () => (seen.includes("fast") ? true : undefined));
    expect(delivered).toBe(false);
    slow.open();
    await within("delivery", delivery);
    expect(seen).toEqual(["fast", "slow"]);
    await bus.close();
  });

  it("waits through a handler's failures, and rejects when the bus closes first", async () => {
    const bus = new InProcessBus({ retryMs: 1, maxRetryMs: 2 });
    let failures = 2;
    await bus.subscribe({
      groupId: "g",
      topics: ["t"],
      handler: async () => {
        if (failures-- > 0) throw new Error("not yet");
      },
    });
    await within("delivery after retries", bus.deliver("t", [{ key: "k", value: Buffer.from("1"), headers: {} }]));
    expect(failures).toBeLessThan(0);

    await bus.subscribe({
      groupId: "never",
      topics: ["u"],
      handler: async () => {
        throw new Error("always");
      },
    });
    const stuck = bus.deliver("u", [{ key: "k", value: Buffer.from("1"), headers: {} }]);
    await bus.close();
    await expect(stuck).rejects.toThrow(/closed/);
  });
});

describe("startInProcessRelay", () => {
  let db: Db;
  const relays: OutboxRelay[] = [];
  const buses: InProcessBus[] = [];
  freshKitDbEachTest((fresh) => {
    db = fresh;
  });
  afterEach(async () => {
    for (const r of relays.splice(0)) await r.stop();
    for (const b of buses.splice(0)) await b.close();
  });

  const write = (topic: string, ns: number[]) =>
    db.tx(async (q) => {
      for (const v of ns)
        await enqueueEvent(q, db.schema, { topic, key: "org_1", type: "x.Happened", source: "t", data: { n: v } });
    });
  const unpublished = async (topic?: string) =>
    (
      await db.query<{ c: number }>(
        `SELECT count(*)::int AS c FROM ${db.schema}.outbox WHERE published_at IS NULL AND ($1::text IS NULL OR topic = $1)`,
        [topic ?? null],
      )
    )[0]?.c;
  const platform = (handler: (m: ConsumedMessage) => Promise<void>, topics = ["a"]) => {
    const bus = new InProcessBus({ retryMs: 1, maxRetryMs: 5 });
    buses.push(bus);
    return {
      bus,
      async start() {
        await bus.subscribe({ groupId: "g", topics, fromBeginning: true, handler });
        const relay = startInProcessRelay({ db, bus, logger: silentLogger, idleIntervalMs: 60_000 });
        relays.push(relay);
        return relay;
      },
    };
  };

  it("marks a row published only after its handler has finished", async () => {
    const handled = gate();
    const seen: number[] = [];
    await write("a", [1, 2, 3]);
    const relay = await platform(async (m) => {
      await handled.opened;
      seen.push(n(m));
    }).start();
    expect(await relay.drain()).toBe(3);
    // Handed to the bus, not yet handled: still unpublished.
    expect(await unpublished()).toBe(3);
    expect(await relay.drain()).toBe(0);
    handled.open();
    await eventually("marked published", async () => ((await unpublished()) === 0 ? true : undefined));
    expect(seen).toEqual([1, 2, 3]);
  });

  it("delivers again after a crash what was handed over but not handled, in order", async () => {
    await write("a", [1, 2]);
    // The first process's handler never succeeds; then the process dies (its bus and relay go away).
    const first = platform(async () => {
      throw new Error("killed before the handler committed");
    });
    const relay = await first.start();
    await relay.drain();
    await write("a", [3]);
    await relay.drain();
    await relay.stop();
    await first.bus.close();
    expect(await unpublished()).toBe(3);

    const seen: number[] = [];
    const second = await platform(async (m) => void seen.push(n(m))).start();
    await second.drain();
    await eventually("all delivered", async () => ((await unpublished()) === 0 ? true : undefined));
    expect(seen).toEqual([1, 2, 3]);
  });

  it("a failing group holds back only its own topic's rows", async () => {
    const bus = new InProcessBus({ retryMs: 1, maxRetryMs: 5 });
    buses.push(bus);
    const seen: number[] = [];
    await bus.subscribe({
      groupId: "broken",
      topics: ["a"],
      handler: async () => {
        throw new Error("broken consumer");
      },
    });
    await bus.subscribe({ groupId: "fine", topics: ["b"], handler: async (m) => void seen.push(n(m)) });
    await write("a", [1]);
    await write("b", [2, 3]);
    const relay = startInProcessRelay({ db, bus, logger: silentLogger, idleIntervalMs: 60_000 });
    relays.push(relay);
    await relay.drain();
    await eventually("b marked", async () => ((await unpublished("b")) === 0 ? true : undefined));
    expect(seen).toEqual([2, 3]);
    expect(await unpublished("a")).toBe(1);
  });

  it("wakes on a commit without polling", async () => {
    const seen: number[] = [];
    await platform(async (m) => void seen.push(n(m))).start();
    await write("a", [7]);
    await eventually("delivered and marked", async () =>
      seen.includes(7) && (await unpublished()) === 0 ? true : undefined,
    );
  });
});
