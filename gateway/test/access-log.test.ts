import { Writable } from "node:stream";
import { createLogger } from "@platform/kit/logger";
import { afterEach, describe, expect, it } from "vitest";
import { API, buildTestGateway, get, ORG, type TestGateway } from "./harness.js";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.app.close();
  gw = undefined;
});

function capture() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: createLogger("gateway-test", "info", sink) };
}

describe("access log", () => {
  it("writes one line per request with the route template, status, duration and ids, never the key", async () => {
    const { lines, logger } = capture();
    gw = await buildTestGateway({ logger });
    const key = gw.identity.addToken({ orgId: ORG, scopes: ["organizations:read"] });
    const res = await get(gw.app, `${API}/organizations/${ORG}`, key);
    await get(gw.app, `${API}/organizations/me`);
    await new Promise((r) => setImmediate(r));
    const requests = lines.filter((l) => l.msg === "request");
    expect(requests).toHaveLength(2);
    expect(requests[0]).toMatchObject({
      method: "GET",
      route: `${API}/organizations/:orgId`,
      status: res.statusCode,
      requestId: res.headers["x-request-id"],
      tokenId: expect.stringMatching(/^tok_/),
      durationMs: expect.any(Number),
    });
    expect(requests[1]).toMatchObject({ route: `${API}/organizations/me`, status: 401 });
    expect(requests[1]).not.toHaveProperty("tokenId");
    expect(JSON.stringify(lines)).not.toContain(key);
    // fastify's own "incoming request" / "request completed" lines are gone.
    expect(lines.filter((l) => l.msg === "incoming request" || l.msg === "request completed")).toEqual([]);
  });

  it("is off with ACCESS_LOG=false", async () => {
    const { lines, logger } = capture();
    gw = await buildTestGateway({ logger, config: { ACCESS_LOG: false } });
    await get(gw.app, `${API}/organizations/me`);
    await new Promise((r) => setImmediate(r));
    expect(lines.filter((l) => l.msg === "request")).toEqual([]);
  });
});
