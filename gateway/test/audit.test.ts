import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { DelegatedRequestServedSchema } from "@platform/contracts/events/gateway";
import type { BusMessage, ConsumedMessage } from "@platform/kit/bus";
import { EVENT_TYPES, TOPICS } from "@platform/kit/events";
import { InProcessBus } from "@platform/kit/in-process-bus";
import { decodeEvent } from "@platform/kit/outbox";
import { capturingLogger } from "@platform/kit/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  API,
  buildTestGateway,
  CHILD_ORG,
  expectProblem,
  get,
  ORG,
  PARTNER_ORG,
  PARTNER_SCOPES,
  STRANGER_ORG,
  type TestGateway,
} from "./harness.js";

const ME = `${API}/organizations/me`;
const actingOn = { "x-platform-acting-on": CHILD_ORG };

let gw: TestGateway | undefined;
let bus: InProcessBus | undefined;
afterEach(async () => {
  await gw?.app.close();
  await bus?.close();
  gw = undefined;
  bus = undefined;
});

/** A gateway on an in-process bus, with what it publishes to the gateway topic. */
async function auditedGateway() {
  bus = new InProcessBus();
  const published: ConsumedMessage[] = [];
  await bus.subscribe({
    groupId: "audit-test",
    topics: [TOPICS.gateway],
    fromBeginning: true,
    handler: async (m) => {
      published.push(m);
    },
  });
  gw = await buildTestGateway({ bus });
  const partnerKey = gw.identity.addToken({ orgId: PARTNER_ORG, scopes: PARTNER_SCOPES });
  return { gw, published, partnerKey };
}

describe("delegation audit", () => {
  it("publishes DelegatedRequestServed for a delegated request", async () => {
    const { gw, published, partnerKey } = await auditedGateway();
    // The audit records the path without its query string.
    const res = await get(gw.app, `${ME}?`, partnerKey, { ...actingOn, "x-request-id": "trace-me-1" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["x-request-id"]).toBe("trace-me-1");
    await vi.waitFor(() => expect(published).toHaveLength(1));

    const message = published[0]!;
    expect(message.key).toBe(PARTNER_ORG);
    const event = decodeEvent(message);
    expect(event).toMatchObject({
      type: EVENT_TYPES.delegatedRequestServed,
      source: "gateway",
      subject: CHILD_ORG,
      time: "2026-01-15T12:00:00.000Z",
    });
    expect(event.id).toMatch(/^[0-9a-f-]{36}$/);
    const data = fromJson(DelegatedRequestServedSchema, event.data as JsonValue);
    expect({ ...data, time: timestampDate(data.time!).toISOString() }).toMatchObject({
      parentOrgId: PARTNER_ORG,
      orgId: CHILD_ORG,
      tokenId: gw.identity.tokenOf(partnerKey).tokenId,
      method: "GET",
      path: ME,
      status: 200,
      requestId: "trace-me-1",
      time: "2026-01-15T12:00:00.000Z",
    });
  });

  it("records the status of delegated requests the service refused", async () => {
    const { gw, published, partnerKey } = await auditedGateway();
    expectProblem(
      await get(gw.app, `${API}/organizations/${STRANGER_ORG}`, partnerKey, actingOn),
      "organization-not-found",
    );
    await vi.waitFor(() => expect(published).toHaveLength(1));
    const data = fromJson(DelegatedRequestServedSchema, decodeEvent(published[0]!).data as JsonValue);
    expect(data).toMatchObject({ status: 404, path: `${API}/organizations/${STRANGER_ORG}` });
  });

  it("publishes nothing for requests on the token's own org or refused before acting on the child", async () => {
    const { gw, published, partnerKey } = await auditedGateway();
    const own = gw.identity.addToken({ orgId: ORG, scopes: ["organizations:read"] });
    expect((await get(gw.app, ME, own)).statusCode).toBe(200);
    expect((await get(gw.app, ME, partnerKey)).statusCode).toBe(200);
    expectProblem(
      await get(gw.app, ME, partnerKey, { "x-platform-acting-on": STRANGER_ORG }),
      "cross-org-delegation-forbidden",
    );
    expectProblem(await get(gw.app, `${API}/users`, partnerKey, actingOn), "delegation-scope-insufficient");
    expectProblem(await get(gw.app, ME, own, actingOn), "delegation-scope-required");
    // A delegated request last: once its record arrives, any earlier one would have too.
    await get(gw.app, `${API}/organizations/me/entitlements`, partnerKey, actingOn);
    await vi.waitFor(() => expect(published).toHaveLength(1));
    const data = fromJson(DelegatedRequestServedSchema, decodeEvent(published[0]!).data as JsonValue);
    expect(data.path).toBe(`${API}/organizations/me/entitlements`);
  });

  it("neither fails nor delays responses when the bus does not take the record, and logs an outage once", async () => {
    const lines: { msg: string; lost?: number }[] = [];
    const logger = capturingLogger("audit-test", "warn", lines);
    bus = new InProcessBus();
    let mode: "down" | "hanging" | "up" = "down";
    const publish = bus.publish.bind(bus);
    bus.publish = (topic: string, messages: BusMessage[]) =>
      mode === "down"
        ? Promise.reject(new Error("broker not reachable"))
        : mode === "hanging"
          ? new Promise<void>(() => {})
          : publish(topic, messages);
    gw = await buildTestGateway({ bus, logger });
    const partnerKey = gw.identity.addToken({ orgId: PARTNER_ORG, scopes: PARTNER_SCOPES });

    for (let i = 0; i < 3; i++) expect((await get(gw.app, ME, partnerKey, actingOn)).statusCode).toBe(200);
    const outage = () => lines.filter((l) => l.msg.startsWith("cannot publish delegation audit"));
    await vi.waitFor(() => expect(outage()).toHaveLength(1));

    mode = "hanging";
    expect((await get(gw.app, ME, partnerKey, actingOn)).statusCode).toBe(200);

    mode = "up";
    expect((await get(gw.app, ME, partnerKey, actingOn)).statusCode).toBe(200);
    await vi.waitFor(() =>
      expect(lines.filter((l) => l.msg.startsWith("delegation audit events are published again"))).toEqual([
        expect.objectContaining({ lost: 3 }),
      ]),
    );
    expect(outage()).toHaveLength(1);
  });
});
