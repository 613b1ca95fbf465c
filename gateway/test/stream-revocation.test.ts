import type { AddressInfo } from "node:net";
import { create, toJson } from "@bufbuild/protobuf";
import { TokenRevokedSchema } from "@platform/contracts/events/identity";
import { EventLogService, EventSchema } from "@platform/contracts/webhooks";
import { hashApiKey } from "@platform/kit/api-keys";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import { InProcessBus } from "@platform/kit/in-process-bus";
import { toBusMessage } from "@platform/kit/outbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REVOKED_COMMENT } from "../src/event-stream.js";
import { API, buildTestGateway, ORG, type TestGateway } from "./harness.js";

// Two gateway instances on one bus (as two processes on Kafka): the revocation event ends the
// key's open event streams on both, at once, with a last comment and no later event. The
// heartbeat (which also rechecks the key) is a minute: only the event can explain the end.

const bus = new InProcessBus();
const log: { id: string; payloadJson: string }[] = [];
const gateways: TestGateway[] = [];
const bases: string[] = [];

beforeAll(async () => {
  for (const id of ["a", "b"]) {
    const gw = await buildTestGateway({
      bus,
      config: { GATEWAY_INSTANCE_ID: id, EVENTS_STREAM_POLL_MS: 20, EVENTS_STREAM_HEARTBEAT_MS: 60_000 },
      services: {
        webhooks: (router) =>
          router.service(EventLogService, {
            // The log after a position (its index); a stream without one starts at the end.
            async pollEvents(req) {
              const from = req.afterPosition === undefined ? log.length : Number(req.afterPosition);
              const events = log.slice(from).map((e) => create(EventSchema, { ...e, type: "test.happened" }));
              return { events, position: BigInt(log.length), caughtUp: true };
            },
          }),
      },
    });
    gateways.push(gw);
    await gw.app.listen({ port: 0, host: "127.0.0.1" });
    bases.push(`http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`);
  }
});
afterAll(async () => {
  for (const gw of gateways) {
    gw.app.server.closeAllConnections();
    await gw.app.close();
  }
  await bus.close();
});

/** An open stream: its text so far, and when it ended. */
async function openStream(base: string, key: string) {
  const res = await fetch(`${base}${API}/events/stream`, { headers: { "x-platform-api-key": key } });
  expect(res.status).toBe(200);
  const stream = { text: "", endedAt: 0, ended: Promise.resolve() };
  const decoder = new TextDecoder();
  stream.ended = (async () => {
    try {
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) stream.text += decoder.decode(chunk);
    } catch {
      // the test's end closed it
    }
    stream.endedAt = Date.now();
  })();
  return stream;
}

async function until(what: string, ok: () => boolean): Promise<void> {
  for (const started = Date.now(); !ok(); await new Promise((r) => setTimeout(r, 10))) {
    if (Date.now() - started > 5_000) throw new Error(`not within 5 s: ${what}`);
  }
}

function revocation(key: string, tokenId: string) {
  const data = create(TokenRevokedSchema, { tokenId, orgId: ORG, keyHash: hashApiKey(key) });
  return toBusMessage(
    {
      id: `evt-revoke-${tokenId}`,
      type: EVENT_TYPES.tokenRevoked,
      source: "identity",
      time: new Date().toISOString(),
      data: toJson(TokenRevokedSchema, data),
    },
    ORG,
  );
}

describe("revocation ends streams on every gateway", () => {
  it("ends the key's streams on both instances within a second, with a last comment and no later event", async () => {
    // The fakes hand out the same first key and token id on both instances.
    const keys = gateways.map((gw) => gw.identity.addToken({ orgId: ORG, scopes: ["webhooks:read"] }));
    expect(keys[0]).toBe(keys[1]);
    const key = keys[0]!;
    const tokenId = gateways[0]!.identity.tokenOf(key).tokenId;
    const other = gateways.map((gw) => gw.identity.addToken({ orgId: ORG, scopes: ["webhooks:read"] }))[0]!;
    const streams = [await openStream(bases[0]!, key), await openStream(bases[1]!, key)];
    const untouched = await openStream(bases[1]!, other);

    log.push({ id: "evt_before", payloadJson: '{"n":1}' });
    await until("the event before", () => streams.every((s) => s.text.includes("id: evt_before")));

    const revokedAt = Date.now();
    await bus.publish(TOPICS.identity, [revocation(key, tokenId)]);
    // Created once the revocation has reached the gateways (the bus delivers asynchronously).
    await bus.idle();
    log.push({ id: "evt_after", payloadJson: '{"n":2}' });
    await Promise.all(streams.map((s) => s.ended));
    for (const s of streams) {
      expect(s.endedAt - revokedAt).toBeLessThan(1_000);
      expect(s.text.endsWith(REVOKED_COMMENT)).toBe(true);
      expect(s.text).not.toContain("evt_after");
    }
    // Another key's stream is not touched, and gets the later event.
    await until("the later event on the other key's stream", () => untouched.text.includes("id: evt_after"));
    expect(untouched.endedAt).toBe(0);
  });
});
