import { createRequire } from "node:module";
import { afterEach, describe, expect, it, vi } from "vitest";
import "../src/kafkajs-idle-fix.js";

// kafkajs's own RequestQueue, the class kafka-bus.ts patches (tulios/kafkajs#1556).
const require = createRequire(import.meta.url);
const RequestQueue = require("kafkajs/src/network/requestQueue/index.js");

const logger = { debug() {}, info() {}, warn() {}, error() {} };

function queue() {
  return new RequestQueue({
    instrumentationEmitter: null,
    maxInFlightRequests: 1,
    requestTimeout: 1000,
    enforceRequestTimeout: false,
    clientId: "test",
    broker: "127.0.0.1:1",
    logger,
    isConnected: () => true,
  });
}

function request(correlationId: number, sent: number[]) {
  return {
    entry: { correlationId, apiKey: 3, apiName: "Metadata", apiVersion: 1, resolve() {}, reject() {} },
    expectResponse: true,
    sendRequest: () => sent.push(correlationId),
  };
}

afterEach(() => vi.useRealTimers());

describe("kafkajs request queue (idle fix)", () => {
  it("schedules no timer once every request is answered", () => {
    vi.useFakeTimers();
    const q = queue();
    const sent: number[] = [];
    q.push(request(1, sent));
    q.fulfillRequest({ correlationId: 1, payload: Buffer.alloc(0), size: 0 });
    // kafkajs 2.2.4 leaves a 0 ms timer here that re-arms itself forever.
    expect(q.throttleCheckTimeoutId).toBeNull();
    expect(vi.getTimerCount()).toBe(0);
    expect(sent).toEqual([1]);
  });

  it("still sends a request that waited behind a throttle once it ends", () => {
    vi.useFakeTimers();
    const q = queue();
    const sent: number[] = [];
    q.maybeThrottle(50);
    q.push(request(1, sent));
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(60);
    expect(sent).toEqual([1]);
  });

  it("sends a request that waited behind the in-flight limit when the first is answered", () => {
    const q = queue();
    const sent: number[] = [];
    q.push(request(1, sent));
    q.push(request(2, sent));
    expect(sent).toEqual([1]);
    q.fulfillRequest({ correlationId: 1, payload: Buffer.alloc(0), size: 0 });
    expect(sent).toEqual([1, 2]);
  });
});
