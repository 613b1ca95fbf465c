import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SseMessage, SseParser, type TailStatus, tail } from "../src/sse.js";

// The console's live tail without a browser: the SSE parser, and a reconnect that resumes with
// Last-Event-ID after the server dropped the stream (GET /events/stream's contract).

describe("SseParser", () => {
  it("splits messages across chunks, joins data lines, skips comments and keeps retry", () => {
    const parser = new SseParser();
    expect(parser.push("retry: 1500\n: connected\n\nid: evt_1\nda")).toEqual([]);
    expect(parser.push('ta: {"a":\ndata: 1}\n\nid: evt_2\r\ndata: x\r\n\r\n')).toEqual([
      { id: "evt_1", event: undefined, data: '{"a":\n1}' },
      { id: "evt_2", event: undefined, data: "x" },
    ]);
    expect(parser.retryMs).toBe(1500);
  });
});

describe("tail", () => {
  const seen: IncomingHttpHeaders[] = [];
  let server: Server;
  let origin: string;
  const realFetch = globalThis.fetch;

  beforeAll(async () => {
    // First connection: two events, then the server drops it. Later ones: what follows the
    // Last-Event-ID sent, then the stream stays open.
    server = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (seen.length === 1) {
        res.end('retry: 10\n\nid: evt_1\ndata: {"id":"evt_1"}\n\nid: evt_2\ndata: {"id":"evt_2"}\n\n');
      } else {
        res.write(`id: evt_3\ndata: {"id":"evt_3","after":"${req.headers["last-event-id"]}"}\n\n`);
      }
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    globalThis.fetch = (url, init) => realFetch(`${origin}${String(url)}`, init);
  });
  afterAll(async () => {
    globalThis.fetch = realFetch;
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
  });

  it("reconnects after a drop with Last-Event-ID and continues after the last event", async () => {
    const messages: SseMessage[] = [];
    const statuses: TailStatus[] = [];
    const controller = new AbortController();
    const done = tail(
      { key: "pk_live_test", actingOn: "org_child" },
      { type: ["scheduling.smartscheduler.booked"] },
      {
        onMessage(m) {
          messages.push(m);
          if (messages.length === 3) controller.abort();
        },
        onStatus: (s) => statuses.push(s),
      },
      controller.signal,
    );
    await done;
    expect(messages.map((m) => m.id)).toEqual(["evt_1", "evt_2", "evt_3"]);
    expect(JSON.parse(messages[2]!.data)).toEqual({ id: "evt_3", after: "evt_2" });
    expect(seen[0]!["last-event-id"]).toBeUndefined();
    expect(seen[1]!["last-event-id"]).toBe("evt_2");
    for (const headers of seen) {
      expect(headers["x-platform-api-key"]).toBe("pk_live_test");
      expect(headers["x-platform-acting-on"]).toBe("org_child");
    }
    expect(statuses).toEqual(["connecting", "live", "reconnecting", "reconnecting", "live", "stopped"]);
  });
});
