import { describe, expect, it } from "vitest";
import {
  FAILURE_RUN_BREAK_MS,
  failingTooLong,
  failureRunAfter,
  JITTER,
  MAX_RETRY_AFTER_MS,
  nextRetryAt,
  parseRetryAfter,
  RETRY_SCHEDULE_MS,
  settle,
  verdictOf,
} from "../../src/domain/retry.js";

const now = new Date("2026-01-15T12:00:00Z");
const at = (ms: number) => new Date(now.getTime() + ms);
const ok = (status: number | undefined, retryAfter?: string) => ({ status, retryAfter, error: undefined });

describe("retry schedule", () => {
  it("is 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h", () => {
    expect(RETRY_SCHEDULE_MS).toEqual([5e3, 3e5, 18e5, 72e5, 18e6, 36e6, 36e6]);
  });

  it("jitters within ±10 % and stops after the seventh retry", () => {
    expect(nextRetryAt(1, now, undefined, () => 0)).toEqual(at(5_000 * (1 - JITTER)));
    expect(nextRetryAt(1, now, undefined, () => 1)).toEqual(at(5_000 * (1 + JITTER)));
    expect(nextRetryAt(2, now, undefined, () => 0.5)).toEqual(at(300_000));
    expect(nextRetryAt(7, now, undefined, () => 0.5)).toEqual(at(36_000_000));
    expect(nextRetryAt(8, now, undefined, () => 0.5)).toBeUndefined();
  });

  it("honours a later Retry-After, capped, and never retries sooner for an earlier one", () => {
    expect(nextRetryAt(1, now, 120_000, () => 0.5)).toEqual(at(120_000));
    expect(nextRetryAt(2, now, 1_000, () => 0.5)).toEqual(at(300_000));
    expect(nextRetryAt(1, now, 7 * 86_400_000, () => 0.5)).toEqual(at(MAX_RETRY_AFTER_MS));
  });

  it("reads Retry-After as seconds or an HTTP date", () => {
    expect(parseRetryAfter("120", now)).toBe(120_000);
    expect(parseRetryAfter("Thu, 15 Jan 2026 12:10:00 GMT", now)).toBe(600_000);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

describe("verdictOf", () => {
  const first = { number: 1, retries: true };
  it("2xx succeeds; 3xx, 4xx, 5xx and no answer retry; 410 is gone", () => {
    expect(verdictOf(ok(204), first, now).kind).toBe("succeeded");
    for (const s of [301, 400, 404, 500, 503, undefined]) expect(verdictOf(ok(s), first, now).kind).toBe("retry");
    expect(verdictOf(ok(410), first, now).kind).toBe("gone");
  });

  it("single-shot attempts and an exhausted chain give up", () => {
    expect(verdictOf(ok(500), { number: 0, retries: false }, now).kind).toBe("gave-up");
    expect(verdictOf(ok(500), { number: 8, retries: true }, now).kind).toBe("gave-up");
  });

  it("disables after five days of failures, not before", () => {
    expect(failingTooLong(null, now)).toBe(false);
    expect(failingTooLong(new Date(now.getTime() - 5 * 86_400_000 + 1), now)).toBe(false);
    expect(failingTooLong(new Date(now.getTime() - 5 * 86_400_000), now)).toBe(true);
  });
});

describe("the failure run", () => {
  const HOUR = 3_600_000;
  const none = { failingSince: null, lastFailureAt: null };

  it("breaks after a gap longer than the longest wait of a retry chain (11 h), with an hour's slack", () => {
    expect(FAILURE_RUN_BREAK_MS).toBe(12 * HOUR);
  });

  it("starts at a failure, continues while failures keep coming, ends with a success", () => {
    const started = failureRunAfter(none, true, now);
    expect(started).toEqual({ failingSince: now, lastFailureAt: now });
    const later = failureRunAfter(started, true, at(FAILURE_RUN_BREAK_MS));
    expect(later).toEqual({ failingSince: now, lastFailureAt: at(FAILURE_RUN_BREAK_MS) });
    expect(failureRunAfter(later, false, at(FAILURE_RUN_BREAK_MS + 1))).toEqual(none);
  });

  it("a failure after a quiet spell starts a new run", () => {
    const run = { failingSince: now, lastFailureAt: at(28 * HOUR) };
    const after = at(28 * HOUR + FAILURE_RUN_BREAK_MS + 1);
    expect(failureRunAfter(run, true, after)).toEqual({ failingSince: after, lastFailureAt: after });
  });

  it("an attempt recorded out of order never moves the latest failure back", () => {
    const run = { failingSince: now, lastFailureAt: at(HOUR) };
    expect(failureRunAfter(run, true, at(HOUR - 5_000))).toEqual(run);
  });
});

describe("settle", () => {
  const DAY = 86_400_000;
  const retry = { kind: "retry", at: at(5_000) } as const;
  const failingFor = (ms: number) => ({ failingSince: new Date(now.getTime() - ms), lastFailureAt: at(-1_000) });

  it("retries a failure of an enabled subscription and keeps its run going", () => {
    expect(settle(retry, { enabled: true, run: failingFor(DAY) }, now)).toEqual({
      run: { failingSince: new Date(now.getTime() - DAY), lastFailureAt: now },
      retryAt: at(5_000),
    });
  });

  it("disables at five days of continuous failure, with no retry", () => {
    expect(settle(retry, { enabled: true, run: failingFor(5 * DAY - 1) }, now).disable).toBeUndefined();
    const settled = settle(retry, { enabled: true, run: failingFor(5 * DAY) }, now);
    expect(settled.disable).toBe("failing");
    expect(settled.retryAt).toBeUndefined();
  });

  it("410 disables; a disabled subscription gets no retry and is not disabled again", () => {
    expect(settle({ kind: "gone" }, { enabled: true, run: failingFor(0) }, now).disable).toBe("endpoint-gone");
    const off = settle(retry, { enabled: false, run: failingFor(6 * DAY) }, now);
    expect(off.retryAt).toBeUndefined();
    expect(off.disable).toBeUndefined();
  });

  it("a success ends the run", () => {
    expect(settle({ kind: "succeeded" }, { enabled: true, run: failingFor(4 * DAY) }, now)).toEqual({
      run: { failingSince: null, lastFailureAt: null },
    });
  });
});
