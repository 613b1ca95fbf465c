import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { run } from "../src/cli.js";
import { parseSince, type Recovery } from "../src/deliveries-commands.js";

// `platform deliveries …` against a stand-in gateway; the real routes are exercised in
// runtime/test/webhooks/operations.test.ts.

const SUB = "sub_000000000000000000000001";
const WRC = "wrc_000000000000000000000001";
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

/** A stand-in API: records each request, answers with `answer`. */
async function api(answer: (req: IncomingMessage, body: string) => { status: number; body: unknown }) {
  const seen: { method: string; url: string; headers: IncomingMessage["headers"]; body: string }[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      const a = answer(req, body);
      res.writeHead(a.status, {
        "content-type": a.status >= 400 ? "application/problem+json" : "application/json",
      });
      res.end(JSON.stringify(a.body));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const recovery = (over: Partial<Recovery>): Recovery => ({
  id: WRC,
  subscriptionId: SUB,
  since: "2026-03-02T08:00:00.000Z",
  status: "running",
  queued: 3,
  delivered: 0,
  failed: 0,
  createdAt: "2026-03-02T10:00:00.000Z",
  completedAt: null,
  ...over,
});

const runCli = async (argv: string[], env: Record<string, string> = {}) => {
  let stdout = "";
  let stderr = "";
  const code = await run(argv, {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    env,
    now: () => new Date("2026-03-02T10:00:00Z"),
  });
  return { code, stdout, stderr };
};

describe("platform deliveries", () => {
  it("explains itself with --help", async () => {
    const help = await runCli(["deliveries", "--help"]);
    expect(help.code).toBe(0);
    for (const sub of ["list", "resend", "recover", "recovery"]) expect(help.stdout).toContain(sub);
    const recover = await runCli(["deliveries", "recover", "--help"]);
    for (const flag of ["--since", "--wait", "--json", "--api-key", "--timeout"])
      expect(recover.stdout).toContain(flag);
  });

  it("reads --since as a duration back from now or a date-time", () => {
    const now = new Date("2026-03-02T10:00:00Z");
    expect(parseSince("2h", now)).toBe("2026-03-02T08:00:00.000Z");
    expect(parseSince("3d", now)).toBe("2026-02-27T10:00:00.000Z");
    expect(parseSince("2026-03-01T00:00:00Z", now)).toBe("2026-03-01T00:00:00Z");
    expect(() => parseSince("yesterday", now)).toThrow(/--since: 'yesterday' is neither a duration/);
  });

  it("recover --wait polls the recovery until it completed, printing its progress", async () => {
    let polls = 0;
    const { url, seen } = await api((req) => {
      if (req.method === "POST") return { status: 202, body: recovery({}) };
      polls += 1;
      if (polls === 1) return { status: 200, body: recovery({ delivered: 1 }) };
      if (polls === 2) return { status: 200, body: recovery({ delivered: 1 }) };
      return {
        status: 200,
        body: recovery({ status: "completed", delivered: 2, failed: 1, completedAt: "2026-03-02T10:00:05.000Z" }),
      };
    });
    const r = await runCli(["deliveries", "recover", SUB, "--since", "2h", "--wait", "--interval", "0.1"], {
      PLATFORM_API_URL: url,
      PLATFORM_API_KEY: "k",
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split("\n")).toEqual([
      `${WRC} running: 0/3 sent, 0 delivered, 0 failed (since 2026-03-02T08:00:00.000Z)`,
      `${WRC} running: 1/3 sent, 1 delivered, 0 failed (since 2026-03-02T08:00:00.000Z)`,
      `${WRC} completed: 3/3 sent, 2 delivered, 1 failed (since 2026-03-02T08:00:00.000Z)`,
    ]);
    const post = seen[0];
    expect(post).toMatchObject({ method: "POST", url: `/api/v1alpha1/webhook-subscriptions/${SUB}/recover` });
    expect(JSON.parse(post?.body ?? "{}")).toEqual({ since: "2026-03-02T08:00:00.000Z" });
    expect(post?.headers["idempotency-key"]).toBeTruthy();
    expect(post?.headers["x-platform-api-key"]).toBe("k");
    expect(seen[1]?.url).toBe(`/api/v1alpha1/webhook-subscriptions/${SUB}/recoveries/${WRC}`);
  });

  it("resend, recovery and list print one line or the JSON", async () => {
    const delivery = {
      id: "wd_000000000000000000000002",
      eventId: "evt_000000000000000000000001",
      eventType: "scheduling.smartscheduler.booked",
      attempt: 3,
      status: "pending",
      trigger: "redeliver",
      responseStatus: null,
      error: null,
      createdAt: "2026-03-02T10:00:00.000Z",
    };
    const { url, seen } = await api((req) => {
      if (req.url?.endsWith("/resend")) return { status: 202, body: delivery };
      if (req.url?.includes("/recoveries/")) return { status: 200, body: recovery({ status: "completed", queued: 0 }) };
      return { status: 200, body: { items: [delivery], nextCursor: null } };
    });
    const env = { PLATFORM_API_URL: url, PLATFORM_API_KEY: "k" };
    const resend = await runCli(["deliveries", "resend", SUB, "wd_000000000000000000000001"], env);
    expect(resend.stdout).toBe(`queued ${delivery.id}: attempt 3 of ${delivery.eventType} ${delivery.eventId}\n`);
    const got = await runCli(["deliveries", "recovery", SUB, WRC, "--json"], env);
    expect(JSON.parse(got.stdout)).toMatchObject({ id: WRC, status: "completed" });
    const list = await runCli(["deliveries", "list", SUB, "--status", "failed"], env);
    expect(list.stdout).toContain(delivery.id);
    expect(seen.at(-1)?.url).toBe(`/api/v1alpha1/webhook-subscriptions/${SUB}/deliveries?limit=25&status=failed`);
  });

  it("says what is wrong in one line and exits 1", async () => {
    const noKey = await runCli(["deliveries", "recover", SUB, "--since", "2h"]);
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toMatch(/an API key is required/);
    const { url } = await api(() => ({
      status: 409,
      body: {
        type: "https://docs.example/platform-api/errors/webhook-recovery-in-progress",
        title: "Webhook recovery in progress",
        status: 409,
        detail: `Recovery ${WRC} of subscription ${SUB} is still running; wait for it to complete.`,
      },
    }));
    const env = { PLATFORM_API_URL: url, PLATFORM_API_KEY: "k" };
    const busy = await runCli(["deliveries", "recover", SUB, "--since", "2h"], env);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toMatch(/409 webhook-recovery-in-progress: Recovery wrc_/);
    const badSince = await runCli(["deliveries", "recover", SUB, "--since", "soon"], env);
    expect(badSince.code).toBe(1);
    expect(badSince.stderr).toMatch(/--since: 'soon'/);
    const badId = await runCli(["deliveries", "resend", "wd_1", SUB], env);
    expect(badId.code).toBe(1);
    expect(badId.stderr).toMatch(/subscriptionId must be a sub_… id/);
  });
});
