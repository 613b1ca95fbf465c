import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ConsumedMessage } from "../src/bus.js";
import type { Db } from "../src/db.js";
import { decodeEvent, enqueueEvent, toBusMessage } from "../src/outbox.js";
import { freshKitDbEachTest } from "./helpers.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN_ID = "00f067aa0ba902b7";

describe("enqueueEvent", () => {
  let db: Db;
  freshKitDbEachTest((fresh) => {
    db = fresh;
  });

  it("writes a row in the caller's transaction and returns its id", async () => {
    const id = await db.tx((q) =>
      enqueueEvent(q, db.schema, {
        topic: "platform.test.v1",
        key: "org_1",
        type: "platform.test.v1.Happened",
        source: "test",
        subject: "thing_1",
        data: { a: [1, 2], b: "x" },
        time: new Date("2026-01-15T12:00:00Z"),
      }),
    );
    const rows = await db.query(`SELECT * FROM ${db.schema}.outbox`);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      id,
      topic: "platform.test.v1",
      key: "org_1",
      subject: "thing_1",
      data: { a: [1, 2], b: "x" },
      time: new Date("2026-01-15T12:00:00Z"),
      published_at: null,
      attempts: 0,
      traceparent: null,
    });
  });

  it("writes nothing when the transaction rolls back", async () => {
    await expect(
      db.tx(async (q) => {
        await enqueueEvent(q, db.schema, { topic: "t", key: "k", type: "x", source: "test", data: {} });
        throw new Error("domain failure");
      }),
    ).rejects.toThrow("domain failure");
    expect(await db.query(`SELECT 1 FROM ${db.schema}.outbox`)).toHaveLength(0);
  });

  it("rejects a schema name that is not a plain identifier", async () => {
    await expect(
      enqueueEvent(db, "x; DROP TABLE y", { topic: "t", key: "k", type: "x", source: "s", data: {} }),
    ).rejects.toThrow(/invalid schema/);
  });

  describe("with OpenTelemetry active", () => {
    const manager = new AsyncLocalStorageContextManager();
    beforeAll(() => {
      context.setGlobalContextManager(manager.enable());
      propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    });
    afterAll(() => {
      context.disable();
      propagation.disable();
    });

    it("records the active span's traceparent", async () => {
      const span = trace.wrapSpanContext({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 1 });
      await context.with(trace.setSpan(context.active(), span), () =>
        db.tx((q) => enqueueEvent(q, db.schema, { topic: "t", key: "k", type: "x", source: "s", data: {} })),
      );
      const [row] = await db.query<{ traceparent: string }>(`SELECT traceparent FROM ${db.schema}.outbox`);
      expect(row?.traceparent).toBe(`00-${TRACE_ID}-${SPAN_ID}-01`);
    });
  });
});

describe("CloudEvents binary mode", () => {
  const envelope = {
    id: "0d9c5c5e-7f59-4a51-9b0c-1a2b3c4d5e6f",
    type: "platform.identity.v1.TokenRevoked",
    source: "identity",
    subject: "tok_1",
    time: "2026-01-15T12:00:00.000Z",
    traceparent: `00-${TRACE_ID}-${SPAN_ID}-01`,
    data: { tokenId: "tok_1", nested: { ok: true } },
  };

  it("carries the attributes as ce_ headers and the data as JSON", () => {
    const m = toBusMessage(envelope, "org_1");
    expect(m.key).toBe("org_1");
    expect(m.headers).toEqual({
      ce_specversion: "1.0",
      ce_id: envelope.id,
      ce_type: envelope.type,
      ce_source: "identity",
      ce_time: envelope.time,
      ce_subject: "tok_1",
      traceparent: envelope.traceparent,
      "content-type": "application/json",
    });
    expect(JSON.parse(m.value.toString())).toEqual(envelope.data);
  });

  it("round-trips, leaving optional attributes out when absent", () => {
    const consumed = (m: ReturnType<typeof toBusMessage>): ConsumedMessage => ({
      ...m,
      topic: "t",
      partition: 0,
      offset: "0",
    });
    expect(decodeEvent(consumed(toBusMessage(envelope, "org_1")))).toEqual(envelope);
    const { subject: _s, traceparent: _t, ...bare } = envelope;
    const decoded = decodeEvent(consumed(toBusMessage(bare, "org_1")));
    expect(decoded).toEqual(bare);
    expect("subject" in decoded).toBe(false);
  });

  it("rejects a message without the required attributes", () => {
    expect(() =>
      decodeEvent({ topic: "t", partition: 0, offset: "7", key: "k", value: Buffer.from("{}"), headers: {} }),
    ).toThrow(/not a CloudEvents/);
  });
});
