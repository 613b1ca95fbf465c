import { create, toJson } from "@bufbuild/protobuf";
import { TokenRevokedSchema } from "@platform/contracts/events/identity";
import type { EventBus, SubscribeOptions } from "@platform/kit/bus";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import { InProcessBus } from "@platform/kit/in-process-bus";
import { createLogger } from "@platform/kit/logger";
import { toBusMessage } from "@platform/kit/outbox";
import { describe, expect, it, vi } from "vitest";
import { startCachePurge } from "../src/cache-purge.js";
import { API, buildTestGateway, get, ORG } from "./harness.js";

const logger = createLogger("cache-purge-test", "silent");

/** An in-process bus whose first `failures` subscribe calls fail, like Kafka still starting. */
function flakyBus(failures: number): InProcessBus & { attempts: number } {
  const bus = Object.assign(new InProcessBus(), { attempts: 0 });
  const subscribe = bus.subscribe.bind(bus);
  bus.subscribe = async (options: SubscribeOptions) => {
    bus.attempts += 1;
    if (bus.attempts <= failures) throw new Error("broker not reachable");
    return subscribe(options);
  };
  return bus;
}

function revoked(keyHash: string) {
  const data = create(TokenRevokedSchema, { tokenId: "tok_1", orgId: ORG, keyHash });
  return toBusMessage(
    {
      id: `evt-${keyHash}`,
      type: EVENT_TYPES.tokenRevoked,
      source: "identity",
      time: "2026-01-15T12:00:00.000Z",
      data: toJson(TokenRevokedSchema, data),
    },
    ORG,
  );
}

describe("cache purge subscription", () => {
  it("keeps trying to subscribe in the background when the bus is down at start", async () => {
    const bus = flakyBus(2);
    const purge = { apiKey: vi.fn(), delegation: vi.fn() };
    const running = await startCachePurge(bus, { instanceId: "a", purge, logger, retryMs: 5 });
    expect(bus.attempts).toBe(1);
    await vi.waitFor(() => expect(bus.attempts).toBe(3));
    await bus.publish(TOPICS.identity, [revoked("abc")]);
    await bus.idle();
    expect(purge.apiKey).toHaveBeenCalledWith("abc", "tok_1");
    await running.close();
    await bus.close();
  });

  it("stops trying once closed", async () => {
    const bus = flakyBus(Number.POSITIVE_INFINITY);
    const running = await startCachePurge(bus, {
      instanceId: "b",
      purge: { apiKey: vi.fn(), delegation: vi.fn() },
      logger,
      retryMs: 5,
    });
    await running.close();
    const attempts = bus.attempts;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(bus.attempts).toBe(attempts);
    await bus.close();
  });

  it("gives every gateway instance its own consumer group, starting at the newest event", async () => {
    const subscribe = vi.fn(async (_options: SubscribeOptions) => ({ close: async () => {} }));
    const bus: EventBus = { subscribe, publish: async () => {}, close: async () => {} };
    await startCachePurge(bus, { instanceId: "pod-7", purge: { apiKey: vi.fn(), delegation: vi.fn() }, logger });
    expect(subscribe.mock.calls[0]?.[0]).toMatchObject({
      groupId: "gateway-pod-7",
      topics: [TOPICS.identity],
      fromBeginning: false,
    });
  });

  it("serves requests while the bus is unreachable", async () => {
    const bus = flakyBus(Number.POSITIVE_INFINITY);
    const gw = await buildTestGateway({ bus });
    const key = gw.identity.addToken({ orgId: ORG, scopes: ["organizations:read"] });
    expect((await get(gw.app, `${API}/organizations/me`, key)).statusCode).toBe(200);
    await gw.app.close();
    await bus.close();
  });
});
