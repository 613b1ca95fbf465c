import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { run } from "../src/cli.js";

// `platform requests list|get` against a stand-in for the API: the query it sends, what it
// prints, and its errors (the API's own behaviour is runtime/test/request-logs.test.ts's).

const NOW = new Date("2026-03-10T12:00:00.000Z");
const RECORD = {
  requestId: "req_abc",
  method: "GET",
  route: "/deals/{dealId}",
  pathIds: { dealId: "deal_d5ebr7cwzp013zsxaeyc7t51" },
  status: 404,
  problemType: "deal-not-found",
  durationMs: 4.25,
  keyId: "tok_1",
  orgId: "org_1",
  actingOn: null,
  idempotencyKey: null,
  createdAt: "2026-03-10T11:59:00.000Z",
};

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

/** An API that records each request and answers with `answer`. */
async function api(answer: (req: IncomingMessage, res: ServerResponse) => void) {
  const seen: { url: string; key: string | undefined }[] = [];
  const server = createServer((req, res) => {
    seen.push({ url: req.url ?? "", key: req.headers["x-platform-api-key"] as string | undefined });
    answer(req, res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const json = (res: ServerResponse, status: number, body: unknown, type = "application/json") => {
  res.writeHead(status, { "content-type": type });
  res.end(JSON.stringify(body));
};

async function cli(argv: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(argv, {
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    env,
    now: () => NOW,
  });
  return { code, out: out.join(""), err: err.join("") };
}

describe("platform requests list", () => {
  it("sends the filters as the API's query and prints a table with the next cursor", async () => {
    const { url, seen } = await api((_req, res) => json(res, 200, { items: [RECORD], nextCursor: "cur_next" }));
    const res = await cli(
      [
        "requests",
        "list",
        "--status-class",
        "4XX",
        "--method",
        "get",
        "--route",
        "/deals/{dealId}",
        "--problem-type",
        "deal-not-found",
        "--key-id",
        "tok_1",
        "--since",
        "2h",
        "--limit",
        "10",
        "--api-url",
        url,
      ],
      { PLATFORM_API_KEY: "pk_test_key" },
    );
    expect(res.code, res.err).toBe(0);
    const sent = new URL(seen[0]!.url, url);
    expect(sent.pathname).toBe("/api/v1alpha1/request-logs");
    expect(Object.fromEntries(sent.searchParams)).toEqual({
      statusClass: "4xx",
      method: "GET",
      route: "/deals/{dealId}",
      problemType: "deal-not-found",
      keyId: "tok_1",
      from: "2026-03-10T10:00:00.000Z",
      limit: "10",
    });
    expect(seen[0]!.key).toBe("pk_test_key");
    expect(res.out).toContain("req_abc");
    expect(res.out).toContain("deal-not-found");
    expect(res.out).toContain("--cursor cur_next");
  });

  it("prints the page as JSON with --json", async () => {
    const { url } = await api((_req, res) => json(res, 200, { items: [RECORD], nextCursor: null }));
    const res = await cli(["requests", "list", "--json", "--api-url", url, "--api-key", "k"]);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.out)).toEqual({ items: [RECORD], nextCursor: null });
  });

  it("refuses bad options before sending anything, and a missing key", async () => {
    const { url, seen } = await api((_req, res) => json(res, 200, { items: [], nextCursor: null }));
    for (const [flag, value] of [
      ["--status-class", "6xx"],
      ["--status", "abc"],
      ["--since", "yesterday"],
      ["--limit", "500"],
    ] as const) {
      const res = await cli(["requests", "list", flag, value, "--api-url", url, "--api-key", "k"]);
      expect(res.code, flag).toBe(1);
      expect(res.err).toContain(flag);
    }
    const noKey = await cli(["requests", "list", "--api-url", url]);
    expect(noKey.code).toBe(1);
    expect(noKey.err).toContain("PLATFORM_API_KEY");
    expect(seen).toEqual([]);
  });
});

describe("platform requests get", () => {
  it("prints one record, and a 404's problem as one line", async () => {
    const { url, seen } = await api((req, res) =>
      req.url?.endsWith("/req_abc")
        ? json(res, 200, RECORD)
        : json(
            res,
            404,
            { type: "https://docs.example/platform-api/errors/request-log-not-found", detail: "No request 'nope'." },
            "application/problem+json",
          ),
    );
    const found = await cli(["requests", "get", "req_abc", "--api-url", url, "--api-key", "k"]);
    expect(found.code).toBe(0);
    expect(found.out).toContain("GET /deals/{dealId}  (dealId=deal_d5ebr7cwzp013zsxaeyc7t51)");
    expect(found.out).toContain("404 deal-not-found");
    const json404 = await cli(["requests", "get", "nope", "--json", "--api-url", url, "--api-key", "k"]);
    expect(json404.code).toBe(1);
    expect(json404.err).toContain("404 request-log-not-found");
    expect(seen.map((s) => s.url)).toEqual(["/api/v1alpha1/request-logs/req_abc", "/api/v1alpha1/request-logs/nope"]);
  });

  it("has --help", async () => {
    const res = await cli(["requests", "get", "--help"]);
    expect(res.code).toBe(0);
    expect(res.out).toContain("request-log-not-found");
  });
});
