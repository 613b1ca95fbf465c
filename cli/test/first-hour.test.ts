import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WEBHOOK_EVENT_CATALOG } from "@platform/contracts/webhooks";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type CliIo, run } from "../src/cli.js";
import { endpoints } from "../src/endpoints.js";
import { nearestKind } from "../src/event-kinds.js";
import { listen } from "../src/listen.js";
import { configDir } from "../src/listen-state.js";

// Issue 56 (the first hour without friction), the CLI's side: one setting for every command
// (PLATFORM_URL), `listen` giving up when it never connected, its stable secret and resumed
// position kept in the user's config directory, and `--events` typos named.

const BOOKED = "scheduling.smartscheduler.booked";
const servers: Server[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** An address nothing listens on (a port just released). */
async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

const configHome = () => {
  const dir = mkdtempSync(join(tmpdir(), "platform-cli-config-"));
  dirs.push(dir);
  return dir;
};

async function runCli(argv: string[], env: Record<string, string>, extra: Partial<CliIo> = {}) {
  let stdout = "";
  let stderr = "";
  const code = await run(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), env, ...extra });
  return { code, stdout, stderr };
}

const until = async (check: () => boolean, what: string) => {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!check()) throw new Error(`timed out waiting for ${what}`);
};

const envelope = (id: string) =>
  JSON.stringify({ id, type: BOOKED, timestamp: "2026-03-02T10:00:00.000Z", data: { meeting: { id: "mtg_1" } } });

describe("one setting for the CLI: PLATFORM_URL", () => {
  it("derives the API below it and the admin plane on the next port; the specific variables still win", () => {
    expect(endpoints({})).toEqual({
      apiUrl: "http://127.0.0.1:8080/api/v1alpha1",
      adminUrl: "http://127.0.0.1:8081",
    });
    expect(endpoints({ PLATFORM_URL: "http://127.0.0.1:31080/" })).toEqual({
      apiUrl: "http://127.0.0.1:31080/api/v1alpha1",
      adminUrl: "http://127.0.0.1:31081",
    });
    // The API's own address, as a user may paste it from the banner, works too.
    expect(endpoints({ PLATFORM_URL: "http://127.0.0.1:31080/api/v1alpha1" }).apiUrl).toBe(
      "http://127.0.0.1:31080/api/v1alpha1",
    );
    expect(
      endpoints({
        PLATFORM_URL: "http://127.0.0.1:31080",
        PLATFORM_API_URL: "http://a:1/api/v1alpha1",
        PLATFORM_ADMIN_URL: "http://b:2",
      }),
    ).toEqual({ apiUrl: "http://a:1/api/v1alpha1", adminUrl: "http://b:2" });
  });

  it("sends trigger to PLATFORM_URL's API, not to port 8080", async () => {
    const paths: string[] = [];
    const api = await serve((req, res) => {
      paths.push(req.url ?? "");
      res.writeHead(401, { "content-type": "application/problem+json" });
      res.end(JSON.stringify({ type: "https://d/errors/invalid-api-key", status: 401, detail: "unknown key" }));
    });
    const r = await runCli(["trigger", "revenue.deal.created"], { PLATFORM_URL: api, PLATFORM_API_KEY: "k" });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("401 invalid-api-key: unknown key");
    expect(paths[0]).toMatch(/^\/api\/v1alpha1\//);
  });

  it("sends the admin commands to the port after PLATFORM_URL's, and says how to set it when unreachable", async () => {
    const down = await closedPort();
    const port = Number(new URL(down).port);
    const platformUrl = `http://127.0.0.1:${port - 1}`;
    const r = await runCli(["orgs", "list"], { PLATFORM_URL: platformUrl });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`cannot reach the admin plane at http://127.0.0.1:${port}`);
    expect(r.stderr).toContain("export PLATFORM_URL");
    expect((await runCli(["--help"], {})).stdout).toContain("PLATFORM_URL");
  });
});

describe("platform listen when it cannot connect", () => {
  it("gives up with a clear message when it never connected", async () => {
    const down = await closedPort();
    const rx = await serve((_req, res) => res.end());
    const r = await runCli(
      ["listen", "--forward-to", rx],
      { PLATFORM_URL: down, PLATFORM_API_KEY: "k", XDG_CONFIG_HOME: configHome() },
      { connectAttempts: 3 },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`cannot reach the API at ${down}/api/v1alpha1 after 3 attempts (ECONNREFUSED)`);
    expect(r.stderr).toContain("PLATFORM_URL");
  });

  it("keeps reconnecting after a first success, however many attempts fail then", async () => {
    let calls = 0;
    const api = await serve((_req, res) => {
      calls++;
      // The first connection succeeds and drops; the next five fail; then it serves again.
      if (calls === 1 || calls > 6) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(": connected\n\n");
        if (calls === 1) setTimeout(() => res.destroy(), 20);
        return;
      }
      res.writeHead(503, { "content-type": "application/problem+json" });
      res.end(JSON.stringify({ type: "https://d/errors/service-unavailable", status: 503, detail: "down" }));
    });
    const errors: string[] = [];
    const stop = new AbortController();
    const done = listen(
      {
        apiUrl: api,
        apiKey: "k",
        forwardTo: "http://127.0.0.1:1/",
        events: [],
        json: false,
        secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        connectAttempts: 2,
        minBackoffMs: 5,
        maxBackoffMs: 10,
      },
      { out: () => {}, err: (l) => errors.push(l), now: () => new Date() },
      stop.signal,
    );
    // Wait for the client to say so, not for the server to answer: the seventh answer can reach
    // the server's handler before the client has read its headers.
    const connected = () => errors.filter((e) => e.startsWith("connected"));
    await until(() => connected().length >= 2, "the second connection");
    stop.abort();
    await expect(done).resolves.toBeUndefined();
    expect(calls).toBe(7);
    expect(connected()).toHaveLength(2);
  });
});

describe("platform listen's secret and position, kept per API key", () => {
  /** A stream that sends `ids` after the Last-Event-ID it is given, recording what it was given. */
  async function stream(ids: string[], seen: (string | undefined)[], refuseResumeOnce = false) {
    return serve((req, res) => {
      const last = req.headers["last-event-id"] as string | undefined;
      seen.push(last);
      if (last && refuseResumeOnce) {
        refuseResumeOnce = false;
        res.writeHead(400, { "content-type": "application/problem+json" });
        res.end(JSON.stringify({ type: "https://d/errors/invalid-cursor", status: 400, detail: "not in the log" }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      const from = last ? ids.indexOf(last) + 1 : 0;
      for (const id of ids.slice(from, from + 1)) res.write(`id: ${id}\ndata: ${envelope(id)}\n\n`);
    });
  }

  async function receiver() {
    const got: { headers: IncomingMessage["headers"]; body: string }[] = [];
    const url = await serve((req, res) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        got.push({ headers: req.headers, body });
        res.statusCode = 204;
        res.end();
      });
    });
    return { url, got };
  }

  /** Runs `listen` until the receiver has `count` deliveries, then stops it. */
  async function listenUntil(argv: string[], env: Record<string, string>, rx: { got: unknown[] }, count: number) {
    const stop = new AbortController();
    const result = runCli(["listen", ...argv], env, { signal: stop.signal });
    await until(() => rx.got.length >= count, `${count} deliveries`);
    stop.abort();
    const r = await result;
    expect(r.code, r.stderr).toBe(0);
    return { ...r, secret: /Signing secret: (whsec_\S+)/.exec(r.stdout)?.[1] };
  }

  it("signs with the same secret on every run, stored 0600 without the key, and resumes after the last event", async () => {
    const ids = ["evt_000000000000000000000001", "evt_000000000000000000000002", "evt_000000000000000000000003"];
    const seen: (string | undefined)[] = [];
    const api = await stream(ids, seen);
    const rx = await receiver();
    const home = configHome();
    const env = { PLATFORM_URL: api, PLATFORM_API_KEY: "key-one-0123456789", XDG_CONFIG_HOME: home };

    const first = await listenUntil(["--forward-to", rx.url], env, rx, 1);
    const second = await listenUntil(["--forward-to", rx.url], env, rx, 2);
    expect(first.secret).toMatch(/^whsec_/);
    expect(second.secret).toBe(first.secret);
    // The second run resumed after what the first forwarded: nothing missed, nothing repeated.
    expect(seen).toEqual([undefined, ids[0]]);
    expect(rx.got.map((g) => g.headers["webhook-id"])).toEqual([ids[0], ids[1]]);
    // What a receiver configured once does: verify every run's deliveries with that one secret.
    const verifier = new Webhook(first.secret as string);
    for (const g of rx.got) expect(() => verifier.verify(g.body, g.headers as Record<string, string>)).not.toThrow();

    const file = join(configDir(env), "listen.json");
    expect(file).toBe(join(home, "platform", "listen.json"));
    expect(first.stdout).toContain(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, "platform")).mode & 0o777).toBe(0o700);
    expect(readFileSync(file, "utf8")).not.toContain(env.PLATFORM_API_KEY);

    // --no-resume starts from now; another key gets its own secret; --secret overrides.
    const third = await listenUntil(["--forward-to", rx.url, "--no-resume"], env, rx, 3);
    expect(seen[2]).toBeUndefined();
    expect(third.secret).toBe(first.secret);
    const other = await listenUntil(["--forward-to", rx.url], { ...env, PLATFORM_API_KEY: "key-two" }, rx, 4);
    expect(other.secret).not.toBe(first.secret);
    const given = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const overridden = await listenUntil(["--forward-to", rx.url, "--secret", given], env, rx, 5);
    expect(overridden.secret).toBe(given);
    expect(overridden.stdout).toContain("from --secret");
  });

  it("starts from now when the saved position has left the event log", async () => {
    const ids = ["evt_000000000000000000000001", "evt_000000000000000000000002"];
    const seen: (string | undefined)[] = [];
    const api = await stream(ids, seen, true);
    const rx = await receiver();
    const env = { PLATFORM_URL: api, PLATFORM_API_KEY: "key-three", XDG_CONFIG_HOME: configHome() };
    await listenUntil(["--forward-to", rx.url], env, rx, 1);
    const resumed = await listenUntil(["--forward-to", rx.url], env, rx, 2);
    expect(seen).toEqual([undefined, ids[0], undefined]);
    expect(resumed.stderr).toContain(
      `the saved position ${ids[0]} is not in the event log any more; starting from now`,
    );
  });
});

describe("listen --events with a typo", () => {
  it("names the nearest kind and lists the kinds, before connecting", async () => {
    const r = await runCli(["listen", "--forward-to", "http://localhost:3000/x", "--events", "revenue.deal.creatd"], {
      PLATFORM_URL: await closedPort(),
      PLATFORM_API_KEY: "k",
      XDG_CONFIG_HOME: configHome(),
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("'revenue.deal.creatd' is not an event kind; did you mean revenue.deal.created?");
    for (const kind of WEBHOOK_EVENT_CATALOG) expect(r.stderr).toContain(kind);
    expect(r.stderr).not.toContain("cannot reach");
    expect(nearestKind("scheduling.smartscheduler.book")).toBe(BOOKED);
    expect(nearestKind("completely-different")).toBeUndefined();
  });
});
