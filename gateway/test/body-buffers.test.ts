import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { BodyBuffers } from "../src/http/body-buffers.js";

const response = () => new EventEmitter() as unknown as ServerResponse;
const MB = 1024 * 1024;

describe("BodyBuffers", () => {
  it("hands a finished response's buffer to the next large body, never one still being sent", () => {
    const pool = new BodyBuffers();
    const first = response();
    const a = pool.take(2 * MB - 5, first);
    expect(a.length).toBe(2 * MB - 5);
    const b = pool.take(2 * MB - 5, response());
    expect(b.buffer).not.toBe(a.buffer);
    first.emit("finish");
    const c = pool.take(MB + 1, response());
    expect(c.buffer).toBe(a.buffer);
    expect(c.length).toBe(MB + 1);
  });

  it("does not reuse the buffer of a response closed before it finished", () => {
    const pool = new BodyBuffers();
    const aborted = response();
    const a = pool.take(MB, aborted);
    aborted.emit("close");
    expect(pool.take(MB, response()).buffer).not.toBe(a.buffer);
  });

  it("allocates small bodies as usual and keeps no more than its limit", () => {
    const pool = new BodyBuffers(2 * MB);
    const small = response();
    const s = pool.take(100_000, small);
    small.emit("finish");
    expect(pool.take(100_000, response()).buffer).not.toBe(s.buffer);
    const [r1, r2] = [response(), response()];
    const b1 = pool.take(2 * MB, r1);
    const b2 = pool.take(2 * MB, r2);
    r1.emit("finish");
    r2.emit("finish");
    const reused = [pool.take(2 * MB, response()).buffer, pool.take(2 * MB, response()).buffer];
    expect(reused).toContain(b1.buffer);
    expect(reused).not.toContain(b2.buffer);
  });
});
