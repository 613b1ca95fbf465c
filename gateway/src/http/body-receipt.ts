import { PassThrough } from "node:stream";
import { problem } from "@platform/kit/problems";
import type { FastifyInstance } from "fastify";
import { closeUnheard } from "./connection-limits.js";

/** How long bodies may take to arrive (gateway config). */
export interface BodyReceipt {
  /** Largest body (BODY_LIMIT_BYTES): the size a chunked body is given time for. */
  bodyLimitBytes: number;
  /** Slowest accepted average rate of a body. */
  minBytesPerSecond: number;
  /** Added to every deadline. */
  graceMs: number;
}

/**
 * The time a body of `size` bytes has to arrive: the grace plus its size at the minimum rate
 * (1 MiB at the default 100 KiB/s: 1 s + 10.24 s).
 */
export function bodyDeadlineMs(size: number, receipt: BodyReceipt): number {
  return receipt.graceMs + Math.ceil((size * 1000) / receipt.minBytesPerSecond);
}

/**
 * Node's own deadline for a whole request (server.requestTimeout), a backstop for what the
 * per-body deadline does not see: headers and the largest body at the minimum rate, and a margin
 * for Node's check, which runs once per connectionsCheckingInterval.
 */
export function requestTimeoutMs(headersTimeoutMs: number, receipt: BodyReceipt): number {
  return headersTimeoutMs + bodyDeadlineMs(receipt.bodyLimitBytes, receipt) + 5_000;
}

/** Statuses of answers given on a request's headers alone that also end its connection. */
const CLOSING_STATUSES = new Set([401, 429]);

/**
 * Bodies are read only after the request has been admitted (auth, scopes, rate limits run in
 * onRequest, see guard.ts), and then within a deadline: a body that has not fully arrived
 * `bodyDeadlineMs` after its headers is answered 408 request-timeout, and its connection closed.
 *
 * Node's server.requestTimeout is one duration for every request, checked only every
 * connectionsCheckingInterval, and it answers on the raw socket (client-errors.ts); it stays as
 * the backstop, while this deadline scales with the body's declared size and answers through
 * the route like any other problem. fastify's preParsing hook is where a body stream may be
 * replaced; its parser reads the replacement, and an error on it becomes the reply.
 *
 * Any answer sent before its request's body has fully arrived (401, 403, 429, 413, 415, 408 …)
 * closes the connection (`Connection: close`), so the rest of the body is never taken for the
 * next request. For an admitted request (413, 408, 400 …) http/connection-limits.ts lets the
 * client read the answer before the socket goes (lingering close); one refused on its headers
 * (415, 401, 403, 429) is closed as soon as its answer is written, its body unread. 401 and 429
 * close the connection even without a body: a client without a valid key, or over its limits,
 * does not keep it.
 */
export function installBodyReceipt(app: FastifyInstance, receipt: BodyReceipt): void {
  // Node answers `Expect: 100-continue` itself, before the request is even routed. Instead the
  // request goes on as any other, and is told to continue only here, once it was admitted: a
  // client that waits for the 100 (curl does for large bodies) never sends a body to be refused.
  app.server.on("checkContinue", (req, res) => app.server.emit("request", req, res));
  app.addHook("preParsing", (request, reply, payload, done) => {
    // Bodyless requests, and bodies already received with their headers, need no deadline.
    if (request.raw.complete) {
      done(null, payload);
      return;
    }
    if (request.headers.expect?.toLowerCase() === "100-continue") reply.raw.writeContinue();
    const declared = Number(request.headers["content-length"]);
    // Larger than the limit: fastify answers 413 from Content-Length without reading it.
    const size = Number.isFinite(declared) ? declared : receipt.bodyLimitBytes;
    if (size > receipt.bodyLimitBytes) {
      done(null, payload);
      return;
    }
    const deadlineMs = bodyDeadlineMs(size, receipt);
    const timed = new PassThrough();
    const timer = setTimeout(() => {
      const late = problem(
        "request-timeout",
        `The request body did not arrive within ${deadlineMs} ms (at least ${receipt.minBytesPerSecond} bytes per second).`,
      );
      // fastify's body reader turns an error without a statusCode into a 400.
      timed.destroy(Object.assign(late, { statusCode: late.status }));
    }, deadlineMs);
    const stop = () => clearTimeout(timer);
    timed.once("end", stop).once("close", stop);
    // Answered without the body being read (a 415 from the parser, a handler that reads none):
    // no deadline left to keep, and no reader for its error.
    reply.raw.once("close", stop);
    timed.on("error", () => {});
    payload.pipe(timed);
    done(null, timed);
  });
  app.addHook("onSend", (request, reply, payload, done) => {
    const early = !request.raw.complete;
    if (early || CLOSING_STATUSES.has(reply.statusCode)) {
      reply.header("connection", "close");
      // Only an admitted request (valid key, within its limits) is heard out with a lingering close.
      if (early && !request.admission) closeUnheard(request.raw.socket);
    }
    done(null, payload);
  });
}
