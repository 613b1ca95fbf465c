import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { WEBHOOK_EVENT_CATALOG } from "@platform/contracts/webhooks";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { failure } from "../src/api-client.js";
import { run } from "../src/cli.js";
import { type ListenIo, listen, newSessionSecret } from "../src/listen.js";
import { sampleFormValues } from "../src/trigger.js";

// `platform listen` against a stand-in gateway (an SSE endpoint that drops connections on
// purpose) and a local receiver; the real gateway is exercised in runtime/test/events-api.test.ts
// and test/events-listen.infra.test.ts.

const BOOKED = "scheduling.smartscheduler.booked";
const servers: Server[] = [];

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

const envelope = (id: string) =>
  JSON.stringify({ id, type: BOOKED, timestamp: "2026-03-02T10:00:00.000Z", data: { meeting: { id: "mtg_1" } } });
const ids = ["evt_000000000000000000000001", "evt_000000000000000000000002", "evt_000000000000000000000003"];

/** A receiver that records what it got, answering `status`. */
async function receiver(status = 204) {
  const got: { headers: IncomingMessage["headers"]; body: string }[] = [];
  const url = await serve((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      got.push({ headers: req.headers, body });
      res.statusCode = status;
      res.end();
    });
  });
  return { url: `${url}/webhooks`, got };
}

function capture(): ListenIo & { lines: string[]; errors: string[] } {
  const lines: string[] = [];
  const errors: string[] = [];
  return {
    lines,
    errors,
    out: (l) => lines.push(l),
    err: (l) => errors.push(l),
    now: () => new Date("2026-03-02T10:00:05Z"),
  };
}

/** An address nothing listens on (a port just released). */
async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

const until = async (check: () => boolean, what: string) => {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!check()) throw new Error(`timed out waiting for ${what}`);
};

describe("platform listen", () => {
  it("forwards each event signed with the session secret, and resumes after a drop with Last-Event-ID", async () => {
    const seen: (string | undefined)[] = [];
    const api = await serve((req, res) => {
      expect(req.url).toBe(`/api/v1alpha1/events/stream?type=${BOOKED}`);
      expect(req.headers["x-platform-api-key"]).toBe("key-1");
      const last = req.headers["last-event-id"] as string | undefined;
      seen.push(last);
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(": connected\n\n");
      // The first connection sends two events and drops; the resumed one sends what follows.
      const from = last ? ids.indexOf(last) + 1 : 0;
      for (const id of ids.slice(from, from + 2)) res.write(`id: ${id}\ndata: ${envelope(id)}\n\n`);
      if (!last) setTimeout(() => res.destroy(), 50);
    });
    const rx = await receiver(204);
    const io = capture();
    const stop = new AbortController();
    const secret = newSessionSecret();
    const done = listen(
      { apiUrl: api, apiKey: "key-1", forwardTo: rx.url, events: [BOOKED], json: false, secret, minBackoffMs: 20 },
      io,
      stop.signal,
    );
    await until(() => rx.got.length === 3, "three forwards");
    stop.abort();
    await done;

    expect(seen).toEqual([undefined, ids[1]]);
    expect(rx.got.map((r) => r.headers["webhook-id"])).toEqual(ids);
    const verifier = new Webhook(secret);
    for (const r of rx.got) {
      // What a receiver does: verify with the secret the session printed.
      expect(verifier.verify(r.body, r.headers as Record<string, string>)).toEqual(
        JSON.parse(envelope(String(r.headers["webhook-id"]))),
      );
      expect(r.headers["content-type"]).toBe("application/json");
    }
    expect(io.lines[1]).toBe(`Signing secret: ${secret}`);
    expect(io.lines.slice(3)).toEqual(
      ids.map((id) =>
        expect.stringMatching(new RegExp(`^2026-03-02T10:00:05.000Z  ${BOOKED}\\s+${id}  → 204 \\(\\d+ ms\\)$`)),
      ),
    );
    expect(io.errors.some((e) => e.startsWith("disconnected") || e.startsWith("the stream ended"))).toBe(true);
    expect(io.errors.some((e) => e.includes(`resuming after ${ids[1]}`))).toBe(true);
  });

  it("prints JSON lines with --json, reports a receiver that does not answer, and starts after --last-event-id", async () => {
    const api = await serve((req, res) => {
      expect(req.headers["last-event-id"]).toBe(ids[0]);
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`id: ${ids[1]}\ndata: ${envelope(ids[1]!)}\n\n`);
    });
    const io = capture();
    const stop = new AbortController();
    const done = listen(
      {
        apiUrl: `${api}/api/v1alpha1/`,
        apiKey: "k",
        forwardTo: `${await closedPort()}/nothing-listens-here`,
        events: [],
        json: true,
        lastEventId: ids[0]!,
      },
      io,
      stop.signal,
    );
    await until(() => io.lines.length === 2, "the event line");
    stop.abort();
    await done;
    const header = JSON.parse(io.lines[0]!);
    expect(header).toMatchObject({
      secret: expect.stringMatching(/^whsec_/),
      events: [],
      apiUrl: `${api}/api/v1alpha1`,
    });
    expect(JSON.parse(io.lines[1]!)).toEqual({
      time: "2026-03-02T10:00:05.000Z",
      id: ids[1],
      type: BOOKED,
      status: null,
      ms: expect.any(Number),
      error: "ECONNREFUSED",
    });
  });

  it("stops with the problem on 401/403/400, and waits out a 429", async () => {
    let calls = 0;
    const api = await serve((_req, res) => {
      calls++;
      if (calls === 1) {
        res.writeHead(429, { "content-type": "application/problem+json", "retry-after": "0" });
        res.end(
          JSON.stringify({ type: "https://docs/platform-api/errors/rate-limit-exceeded", detail: "at most 5 streams" }),
        );
        return;
      }
      res.writeHead(403, { "content-type": "application/problem+json" });
      res.end(
        JSON.stringify({ type: "https://docs/platform-api/errors/insufficient-scope", detail: "needs webhooks:read" }),
      );
    });
    const io = capture();
    await expect(
      listen(
        { apiUrl: api, apiKey: "k", forwardTo: "http://127.0.0.1:1/", events: [], json: false, maxBackoffMs: 20 },
        io,
        new AbortController().signal,
      ),
    ).rejects.toThrow("403 insufficient-scope: needs webhooks:read");
    expect(calls).toBe(2);
    expect(io.errors[0]).toMatch(/429 rate-limit-exceeded: at most 5 streams; retrying/);
  });
});

describe("the event commands", () => {
  const runCli = async (argv: string[], env: Record<string, string> = {}) => {
    let stdout = "";
    let stderr = "";
    const code = await run(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), env });
    return { code, stdout, stderr };
  };

  it("explain themselves with --help", async () => {
    const listenHelp = await runCli(["listen", "--help"]);
    expect(listenHelp.code).toBe(0);
    for (const flag of [
      "--forward-to",
      "--events",
      "--api-key",
      "--api-url",
      "--json",
      "--last-event-id",
      "--secret",
    ]) {
      expect(listenHelp.stdout).toContain(flag);
    }
    expect(listenHelp.stdout).toContain("webhook-signature");
    const triggerHelp = await runCli(["trigger", "--help"]);
    // Every kind of the webhook catalog, each with what it does.
    for (const kind of WEBHOOK_EVENT_CATALOG)
      expect(triggerHelp.stdout).toMatch(new RegExp(`${kind.replaceAll(".", "\\.")} +\\w`));
    expect(triggerHelp.stdout).toContain("deals:write");
    expect((await runCli(["--help"])).stdout).toMatch(/listen[\s\S]*trigger/);
  });

  it("need an API key and a known kind, and say so with exit code 1", async () => {
    const noKey = await runCli(["listen", "--forward-to", "http://localhost:3000/x"]);
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toMatch(/an API key is required: pass --api-key or set PLATFORM_API_KEY/);
    const badUrl = await runCli(["listen", "--forward-to", "ftp://x"], { PLATFORM_API_KEY: "k" });
    expect(badUrl.code).toBe(1);
    expect(badUrl.stderr).toMatch(/--forward-to must be an http/);
    const unknown = await runCli(["trigger", "revenue.nope"], { PLATFORM_API_KEY: "k" });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/cannot trigger 'revenue.nope'; supported: scheduling.smartscheduler.booked/);
    const downUrl = await closedPort();
    const down = await runCli(["trigger", BOOKED, "--api-url", downUrl], { PLATFORM_API_KEY: "k" });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain(`cannot reach the API at ${downUrl}/api/v1alpha1 (ECONNREFUSED)`);
  });

  it("answer every required field of a matching form when triggering", () => {
    expect(
      sampleFormValues([
        { key: "region", type: "select", options: ["EMEA", "APAC"], required: true },
        { key: "products", type: "multi-select", options: ["a", "b"], required: true },
        { key: "seats", type: "number", options: [], required: true },
        { key: "notes", type: "text", options: [], required: false },
      ]),
    ).toEqual({ region: "EMEA", products: ["a"], seats: 1 });
  });
});

describe("API failures", () => {
  it("name the missing scope of an insufficient-scope problem, once", async () => {
    const problem = (detail: string) =>
      new Response(
        JSON.stringify({ type: "https://docs/errors/insufficient-scope", detail, requiredScope: "deals:write" }),
        {
          status: 403,
          headers: { "content-type": "application/problem+json" },
        },
      );
    expect((await failure(problem("Forbidden."), "POST /deals")).message).toBe(
      "POST /deals: 403 insufficient-scope: Forbidden. (the key needs deals:write)",
    );
    expect((await failure(problem("This endpoint requires the deals:write scope."), "POST /deals")).message).toBe(
      "POST /deals: 403 insufficient-scope: This endpoint requires the deals:write scope.",
    );
  });
});
