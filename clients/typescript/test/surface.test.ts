import { readFileSync } from "node:fs";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  type ArgsOf,
  CLIENT_VERSION,
  DEFAULT_RETRY,
  OPERATIONS,
  type OperationId,
  type OptionsOf,
  type PlatformProblem,
  PROBLEM_CATALOG,
  type ProblemExtensions,
  type ProblemName,
  parseProblem,
  RESOURCES,
  STREAMING_OPERATIONS,
} from "../src/index.js";
import { backoffMs, delayAfter, isRetriableStatus, retryAfterMs, retryPolicy } from "../src/retry.js";

describe("the operation surface", () => {
  it("reaches every operation of the document through a resource method", () => {
    const grouped: string[] = Object.values(RESOURCES).flatMap((methods) => Object.values(methods));
    expect(new Set(grouped).size).toBe(grouped.length);
    const missing = Object.keys(OPERATIONS).filter(
      (id) => !grouped.includes(id) && !STREAMING_OPERATIONS.includes(id as OperationId),
    );
    // A new operation is callable by operationId and by path at once; give it a resource name in src/resources.ts.
    expect(missing, "operations without a resource method").toEqual([]);
    expect(Object.keys(OPERATIONS).length).toBeGreaterThanOrEqual(66);
  });

  it("types each call's arguments from the operation", () => {
    // No path or query parameters: options only (issue 56), so nothing lands in the query.
    expectTypeOf<ArgsOf<"getMyOrganization">>().toEqualTypeOf<[options?: OptionsOf<"getMyOrganization">]>();
    expectTypeOf<ArgsOf<"getDeal">[0]>().toEqualTypeOf<{ dealId: string }>();
    expectTypeOf<ArgsOf<"createDeal">[0]>().toHaveProperty("accountId");
    // If-Match makes the options argument required.
    expectTypeOf<ArgsOf<"updateUser">>().toHaveProperty("2");
    expectTypeOf<ArgsOf<"updateUser">[2]>().toHaveProperty("ifMatch");
  });

  it("keeps CLIENT_VERSION in step with package.json", () => {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
    expect(CLIENT_VERSION).toBe(pkg.version);
  });
});

describe("problems", () => {
  it("parses every type of the catalog into a typed problem, and nothing else", () => {
    for (const name of Object.keys(PROBLEM_CATALOG)) {
      const uri = `https://docs.example/platform-api/errors/${name}`;
      expect(parseProblem({ type: uri, title: "t", status: 400, detail: "d" })).toMatchObject({
        type: name,
        typeUri: uri,
      });
    }
    expect(parseProblem({ type: "https://docs.example/platform-api/errors/no-such-thing" })).toBeUndefined();
    expect(parseProblem("<html>Bad gateway</html>")).toBeUndefined();
    const p = parseProblem({
      type: "https://d/platform-api/errors/seat-limit-exceeded",
      title: "Seat limit exceeded",
      status: 403,
      detail: "full",
      seatLimit: 10,
      remainingSeats: 0,
    }) as PlatformProblem;
    if (p.type === "seat-limit-exceeded") expectTypeOf(p.remainingSeats).toEqualTypeOf<number>();
    expect(p).toMatchObject({ seatLimit: 10, remainingSeats: 0 });
    // Extension members are declared only for names of the catalog.
    expectTypeOf<keyof ProblemExtensions>().toExtend<ProblemName>();
  });
});

describe("retry policy", () => {
  it("retries 429 and the transient 5xx, never another 4xx, whatever retryOn says", () => {
    for (const status of [429, 500, 502, 503, 504]) expect(isRetriableStatus(status, DEFAULT_RETRY)).toBe(true);
    for (const status of [400, 401, 403, 404, 409, 412, 422, 501]) {
      expect(isRetriableStatus(status, DEFAULT_RETRY)).toBe(false);
    }
    expect(isRetriableStatus(409, retryPolicy({ retryOn: [409] }))).toBe(false);
    expect(retryPolicy(false).maxRetries).toBe(0);
  });

  it("doubles from 1 s to a 30 s cap with jitter in the upper half", () => {
    const policy = DEFAULT_RETRY;
    expect([0, 1, 2, 3, 4, 5, 6].map((r) => backoffMs(r, policy, () => 0))).toEqual([
      500, 1000, 2000, 4000, 8000, 15000, 15000,
    ]);
    expect([0, 1, 2, 3, 4, 5, 6].map((r) => backoffMs(r, policy, () => 0.999999))).toEqual([
      1000, 2000, 4000, 8000, 16000, 30000, 30000,
    ]);
  });

  it("reads Retry-After as seconds or an HTTP date, and never waits less than it says", () => {
    expect(retryAfterMs("7")).toBe(7000);
    expect(retryAfterMs("Wed, 02 Mar 2026 10:00:30 GMT", Date.parse("2026-03-02T10:00:00Z"))).toBe(30_000);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs("soon")).toBeUndefined();
    expect(delayAfter(3, 7000, DEFAULT_RETRY, () => 0)).toBe(7000);
    expect(delayAfter(3, 7000, DEFAULT_RETRY, () => 0.99)).toBeLessThanOrEqual(7250);
  });
});
