import { afterEach, describe, expect, it } from "vitest";
import type { BusMessage, ConsumedMessage } from "../src/bus.js";
import { InProcessBus } from "../src/in-process-bus.js";
import { within } from "./helpers.js";

const msg = (n: number, key = "org_a"): BusMessage => ({
  key,
  value: Buffer.from(String(n)),
  headers: { n: String(n) },
});
const num = (m: ConsumedMessage) => Number(m.value.toString());
const values = (ms: ConsumedMessage[]) => ms.map(num);

describe("InProcessBus", () => {
  let bus: InProcessBus;
  afterEach(async () => {
    await bus.close();
  });

  it("delivers in publish order, one message at a time per group", async () => {
    bus = new InProcessBus();
    const seen: number[] = [];
    let active = 0;
    let maxActive = 0;
    await bus.subscribe({
      groupId: "g",
      topics: ["t1", "t2"],
      handler: async (m) => {
        active++;
        maxActive = Math.max(maxActive, active);
        await new Promise((r) => setTimeout(r, 1));
        seen.push(num(m));
        active--;
      },
    });
    await bus.publish("t1", [msg(1), msg(2)]);
    await bus.publish("t2", [msg(3)]);
    await bus.publish("t1", [msg(4)]);
    await within("idle", bus.idle());
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(maxActive).toBe(1);
  });

  it("publish returns before delivery", async () => {
    bus = new InProcessBus();
    const seen: number[] = [];
    await bus.subscribe({ groupId: "g", topics: ["t"], handler: async (m) => void seen.push(num(m)) });
    await bus.publish("t", [msg(1)]);
    expect(seen).toEqual([]);
    await within("idle", bus.idle());
    expect(seen).toEqual([1]);
  });

  it("gives every group every message, and shares a group's messages among its members", async () => {
    bus = new InProcessBus();
    const a: ConsumedMessage[] = [];
    const b1: ConsumedMessage[] = [];
    const b2: ConsumedMessage[] = [];
    await bus.subscribe({ groupId: "a", topics: ["t"], handler: async (m) => void a.push(m) });
    await bus.subscribe({ groupId: "b", topics: ["t"], handler: async (m) => void b1.push(m) });
    await bus.subscribe({ groupId: "b", topics: ["t"], handler: async (m) => void b2.push(m) });
    const keys = ["org_a", "org_b", "org_c", "org_d", "org_e", "org_f"];
    await bus.publish(
      "t",
      keys.map((k, i) => msg(i, k)),
    );
    await within("idle", bus.idle());
    expect(values(a)).toEqual([0, 1, 2, 3, 4, 5]);
    expect([...values(b1), ...values(b2)].sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(a[0]).toMatchObject({ topic: "t", partition: 0, offset: "0", key: "org_a", headers: { n: "0" } });
  });

  it("starts a new group at the end unless fromBeginning", async () => {
    bus = new InProcessBus();
    await bus.publish("t", [msg(1), msg(2)]);
    const latest: number[] = [];
    const earliest: number[] = [];
    await bus.subscribe({ groupId: "late", topics: ["t"], handler: async (m) => void latest.push(num(m)) });
    await bus.subscribe({
      groupId: "all",
      topics: ["t"],
      fromBeginning: true,
      handler: async (m) => void earliest.push(num(m)),
    });
    await bus.publish("t", [msg(3)]);
    await within("idle", bus.idle());
    expect(latest).toEqual([3]);
    expect(earliest).toEqual([1, 2, 3]);
  });

  it("redelivers a message whose handler threw, without skipping or reordering", async () => {
    bus = new InProcessBus({ retryMs: 1, maxRetryMs: 5 });
    const seen: number[] = [];
    let failuresLeft = 3;
    await bus.subscribe({
      groupId: "g",
      topics: ["t"],
      handler: async (m) => {
        const n = num(m);
        if (n === 2 && failuresLeft-- > 0) throw new Error("transient");
        seen.push(n);
      },
    });
    await bus.publish("t", [msg(1), msg(2), msg(3)]);
    await within("idle", bus.idle());
    expect(seen).toEqual([1, 2, 3]);
    expect(failuresLeft).toBe(-1);
  });

  it("keeps a group's offset when its subscription closes and resumes there", async () => {
    bus = new InProcessBus();
    const first: number[] = [];
    const sub = await bus.subscribe({ groupId: "g", topics: ["t"], handler: async (m) => void first.push(num(m)) });
    await bus.publish("t", [msg(1)]);
    await within("idle", bus.idle());
    await sub.close();
    await bus.publish("t", [msg(2), msg(3)]);
    await within("idle (no members)", bus.idle());
    const second: number[] = [];
    await bus.subscribe({
      groupId: "g",
      topics: ["t"],
      fromBeginning: true,
      handler: async (m) => void second.push(num(m)),
    });
    await within("idle", bus.idle());
    expect(first).toEqual([1]);
    expect(second).toEqual([2, 3]);
  });

  it("refuses to publish after close", async () => {
    bus = new InProcessBus();
    await bus.close();
    await expect(bus.publish("t", [msg(1)])).rejects.toThrow(/closed/);
  });
});
