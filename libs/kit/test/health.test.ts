import { createClient, createRouterTransport } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@platform/contracts/health";
import { describe, expect, it } from "vitest";
import { healthRoutes } from "../src/health.js";

function healthClient(serving: () => Promise<boolean>) {
  return createClient(Health, createRouterTransport(healthRoutes({ name: "billing", serving, watchIntervalMs: 10 })));
}

describe("gRPC health", () => {
  it("answers SERVING or NOT_SERVING for the server and its own name, NOT_FOUND for another", async () => {
    let up = true;
    const health = healthClient(async () => up);
    expect((await health.check({ service: "" })).status).toBe(Status.SERVING);
    expect((await health.check({ service: "billing" })).status).toBe(Status.SERVING);
    up = false;
    expect((await health.check({ service: "" })).status).toBe(Status.NOT_SERVING);
    await expect(health.check({ service: "shipping" })).rejects.toMatchObject({ code: 5 });
  });

  it("is NOT_SERVING when the readiness check throws (a database that does not answer)", async () => {
    const health = healthClient(async () => {
      throw new Error("connection refused");
    });
    expect((await health.check({})).status).toBe(Status.NOT_SERVING);
  });

  it("streams the status on Watch whenever it changes, and SERVICE_UNKNOWN for another name", async () => {
    let up = true;
    const health = healthClient(async () => up);
    const abort = new AbortController();
    const seen: Status[] = [];
    for await (const res of health.watch({ service: "billing" }, { signal: abort.signal })) {
      seen.push(res.status);
      if (seen.length === 1) up = false;
      else break;
    }
    abort.abort();
    expect(seen).toEqual([Status.SERVING, Status.NOT_SERVING]);
    const unknown: Status[] = [];
    for await (const res of health.watch({ service: "shipping" })) unknown.push(res.status);
    expect(unknown).toEqual([Status.SERVICE_UNKNOWN]);
  });
});
