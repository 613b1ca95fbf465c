import { newId } from "@platform/kit/ids";
import { eventually } from "@platform/kit/testing";
import { describe, expect, it } from "vitest";
import { httpSender, systemResolver } from "../src/delivery/sender.js";
import { deliveryWorker } from "../src/delivery/worker.js";
import { fakeResolver, meeting, publishMeetingEvent, silentLogger, startReceiver } from "./builders.js";
import {
  BOOKED,
  bus,
  CANCELED,
  clock,
  db,
  deliveries,
  makeWorker,
  receiver,
  SECOND,
  subscribe,
  useDeliveryWorld,
} from "./delivery-fixture.js";

useDeliveryWorld();

describe("isolation and safety", () => {
  it("a slow endpoint does not hold up others; it fails at the timeout", async () => {
    const slow = await startReceiver();
    try {
      const org = newId("org_");
      const slowSub = await subscribe(org, [BOOKED], slow.url);
      const sub = await subscribe(org, [BOOKED]);
      slow.replies.push({ status: 200, delayMs: 5000 }, { status: 200, delayMs: 5000 });
      const loopWorker = makeWorker(3000);
      const loop = loopWorker.start();
      try {
        await publishMeetingEvent(bus, "booked", meeting(org));
        await eventually("the fast endpoint's delivery", async () => {
          const ds = await deliveries(org, sub.id);
          return ds[0]?.status === "succeeded" ? true : undefined;
        });
        // Done while the slow endpoint still holds its attempt.
        expect((await deliveries(org, slowSub.id))[0]?.status).toBe("pending");
        const [d] = await eventually("the slow endpoint's failure", async () => {
          const ds = await deliveries(org, slowSub.id);
          return ds[0]?.status === "failed" ? ds : undefined;
        });
        expect(d?.error).toMatch(/no response within 3000 ms/);
      } finally {
        await loop.close();
      }
    } finally {
      await slow.close();
    }
  });

  it("subscriptions sharing a hanging endpoint hold only its cap of the worker; another endpoint's delivery goes through", async () => {
    const dead = await startReceiver();
    let release: () => void = () => {};
    dead.state.fallback = { status: 200, until: new Promise<void>((r) => (release = r)) };
    const loopWorker = deliveryWorker({
      db,
      clock,
      logger: silentLogger,
      // No timeout gets in the way: the endpoint hangs until the test releases it.
      sender: httpSender({ allowPrivateTargets: true, resolve: systemResolver, timeoutMs: 60_000 }),
      leaseMs: 120 * SECOND,
      concurrency: 4,
      perEndpoint: 2,
      pollMs: 20,
    });
    const loop = loopWorker.start();
    try {
      const org = newId("org_");
      // Six subscriptions of one org, one endpoint (paths differ, the origin is the same).
      const hanging = [];
      for (let i = 0; i < 6; i++) hanging.push(await subscribe(org, [BOOKED], `${dead.url}/${i}`));
      const live = await subscribe(org, [CANCELED]);
      await publishMeetingEvent(bus, "booked", meeting(org));
      await eventually("the hanging endpoint's share", () => (dead.received.length >= 2 ? true : undefined));
      // Queued after the six, so claimed in order it would wait behind them without the endpoint cap.
      clock.advance(SECOND);
      await publishMeetingEvent(bus, "canceled", meeting(org));
      await eventually("the live endpoint's delivery", async () =>
        (await deliveries(org, live.id))[0]?.status === "succeeded" ? true : undefined,
      );
      // Meanwhile the hanging endpoint still holds exactly its cap, nothing of it completed.
      expect(dead.received).toHaveLength(2);
      const states = await Promise.all(hanging.map(async (h) => (await deliveries(org, h.id))[0]?.status));
      expect(states.every((s) => s === "pending")).toBe(true);
    } finally {
      release();
      await loop.close();
      await dead.close();
    }
  });

  it("checks the resolved address at connect time, and never follows redirects", async () => {
    const port = new URL(receiver.url).port;
    const strict = httpSender({
      allowPrivateTargets: false,
      resolve: fakeResolver({ "rebound.example.com": ["127.0.0.1"] }),
      timeoutMs: 1000,
    });
    const req = { headers: {}, body: "{}" };
    const rebound = await strict({ ...req, url: `https://rebound.example.com:${port}/hooks` });
    expect(rebound).toMatchObject({ status: undefined, error: expect.stringMatching(/refused target/) });
    const literal = await strict({ ...req, url: `https://127.0.0.1:${port}/hooks` });
    expect(literal.error).toMatch(/refused target/);
    // IPv4-compatible IPv6 (::/96) is refused outright, as a literal and as a DNS answer.
    const compatible = await strict({ ...req, url: `https://[::127.0.0.1]:${port}/hooks` });
    expect(compatible.error).toMatch(/refused target/);
    const compatibleName = httpSender({
      allowPrivateTargets: false,
      resolve: fakeResolver({ "compat.example.com": ["::808:808"] }),
      timeoutMs: 1000,
    });
    expect((await compatibleName({ ...req, url: `https://compat.example.com:${port}/hooks` })).error).toMatch(
      /refused target/,
    );
    const plain = await strict({ ...req, url: `http://93.184.216.34:${port}/hooks` });
    expect(plain.error).toMatch(/HTTPS/);
    expect(receiver.received).toHaveLength(0);

    receiver.replies.push({ status: 302, headers: { location: `${receiver.url}/elsewhere` } });
    const lax = httpSender({ allowPrivateTargets: true, resolve: systemResolver, timeoutMs: 1000 });
    expect(await lax({ ...req, url: receiver.url })).toMatchObject({ status: 302 });
    expect(receiver.received).toHaveLength(1);
  });

  it("reads an answer only up to its limit, and keeps its status and Retry-After", async () => {
    const send = httpSender({ allowPrivateTargets: true, resolve: systemResolver, timeoutMs: 5000 });
    const req = { headers: {}, body: "{}", url: receiver.url };
    receiver.replies.push({ status: 503, headers: { "retry-after": "120" }, bodyBytes: 4 * 1024 * 1024 });
    expect(await send(req)).toMatchObject({ status: 503, retryAfter: "120", error: undefined });
    // The endpoint's next delivery goes through, on a new connection or a reused one.
    expect(await send(req)).toMatchObject({ status: 200, error: undefined });
    expect(receiver.received).toHaveLength(2);
  });
});
