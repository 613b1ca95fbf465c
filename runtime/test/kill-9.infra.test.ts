import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sandboxAccountId } from "@platform/sandbox";
import { afterAll, describe, expect, it } from "vitest";
import { type EmbeddedProcess, startEmbedded, stopEmbedded } from "./support/embedded-process.js";

// The embedded runtime killed with SIGKILL during a burst of writes: after a restart on the
// same data directory, every acknowledged deal has its revenue.deal.created event exactly once
// in GET /events, and its webhook is delivered. (The in-process bus holds events in memory
// only; the outbox rows stay unpublished until every consumer has handled them.)

const SEED = "sandbox";
const CREATED = "revenue.deal.created";
const port = (Number(process.env.TEST_PORT_BASE) || 20_000) + 200 + Math.floor(Math.random() * 100) * 10;
const dataDir = mkdtempSync(join(tmpdir(), "platform-kill9-"));
const running: EmbeddedProcess[] = [];

// The webhook receiver: every POST's body, answered 200.
const received: string[] = [];
const receiver = createServer((req, res) => {
  let body = "";
  req.on("data", (d) => {
    body += d;
  });
  req.on("end", () => {
    received.push(body);
    res.writeHead(200).end();
  });
});

afterAll(async () => {
  for (const p of running) await stopEmbedded(p, "SIGKILL");
  await new Promise<void>((done) => receiver.close(() => done()));
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(): Promise<EmbeddedProcess> {
  const p = await startEmbedded({
    dataDir,
    port,
    env: { WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true", WEBHOOKS_POLL_MS: "50" },
  });
  running.push(p);
  return p;
}

async function call(p: EmbeddedProcess, method: string, path: string, body?: unknown, idempotencyKey?: string) {
  const res = await fetch(`${p.api}${path}`, {
    method,
    headers: {
      "x-platform-api-key": p.key("acme-full"),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
      ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** Every event of the org's log of one kind, following the cursors. */
async function events(p: EmbeddedProcess, type: string): Promise<{ id: string; data: unknown }[]> {
  const all: { id: string; data: unknown }[] = [];
  let cursor: string | null = null;
  do {
    const page: { status: number; json: Record<string, unknown> } = await call(
      p,
      "GET",
      `/events?type=${type}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    expect(page.status).toBe(200);
    all.push(...(page.json.items as { id: string; data: unknown }[]));
    cursor = page.json.nextCursor as string | null;
  } while (cursor);
  return all;
}

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe("the embedded runtime killed with SIGKILL during writes", { timeout: 600_000 }, () => {
  it("has every acknowledged deal's event exactly once after a restart, and its webhook", async () => {
    await new Promise<void>((done) => receiver.listen(port + 1, "127.0.0.1", done));
    let p = await start();
    const subscribed = await call(
      p,
      "POST",
      "/webhook-subscriptions",
      {
        endpointUrl: `http://127.0.0.1:${port + 1}/hooks`,
        events: [CREATED],
      },
      "kill9-subscription",
    );
    expect(subscribed.status, JSON.stringify(subscribed.json)).toBe(201);

    // A burst: sixteen writers, each POST with its Idempotency-Key, faster than the consumers
    // keep up with; SIGKILL once 40 were acknowledged, with their events still in flight.
    const acknowledged: string[] = [];
    let n = 0;
    let killed = false;
    const writer = async () => {
      while (!killed) {
        const i = ++n;
        try {
          const res = await call(
            p,
            "POST",
            "/deals",
            { name: `Kill test deal ${i}`, accountId: sandboxAccountId(SEED, "analytical"), stage: "Discovery" },
            `kill9-${i}`,
          );
          if (res.status === 201) acknowledged.push(res.json.id as string);
          else if (res.status !== 429)
            throw new Error(`POST /deals answered ${res.status}: ${JSON.stringify(res.json)}`);
        } catch (err) {
          if (!killed) throw err;
        }
        if (acknowledged.length >= 40 && !killed) {
          killed = true;
          p.child.kill("SIGKILL");
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, writer));
    expect((await p.exited).signal).toBe("SIGKILL");
    running.splice(running.indexOf(p), 1);
    expect(acknowledged.length).toBeGreaterThanOrEqual(40);

    p = await start();
    const dealOf = (e: { data: unknown }) => (e.data as { deal?: { id?: string } }).deal?.id;
    const logged = await until("every acknowledged deal's event in GET /events", 120_000, async () => {
      const all = await events(p, CREATED);
      const ids = new Set(all.map(dealOf));
      return acknowledged.every((id) => ids.has(id)) ? all : undefined;
    });
    for (const id of acknowledged)
      expect(
        logged.filter((e) => dealOf(e) === id),
        id,
      ).toHaveLength(1);
    expect(new Set(logged.map((e) => e.id)).size).toBe(logged.length);

    // Each acknowledged deal's webhook reaches the receiver (at least once: a send cut by the kill goes again).
    await until("a webhook per acknowledged deal", 120_000, async () =>
      acknowledged.every((id) => received.some((body) => body.includes(id))) ? true : undefined,
    );
    const { code } = await stopEmbedded(p);
    running.splice(running.indexOf(p), 1);
    expect(code, p.output()).toBe(0);
  });
});
