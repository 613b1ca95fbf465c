import type { IncomingMessage } from "node:http";
import { idSequence } from "@platform/kit/ids";

export const REQUEST_ID_HEADER = "x-request-id";

// A caller's id is echoed in headers and logs, so only a short, plain token is trusted.
const SANE = /^[A-Za-z0-9._:-]{1,128}$/;

// A counter behind a per-process random prefix: unique across instances, no randomness per request.
const nextRequestId = idSequence("req_");

/** Whether `id` could be a request's id: a `req_…` or a caller's sane X-Request-Id. */
export const isRequestIdShaped = (id: string): boolean => SANE.test(id);

/** The caller's X-Request-Id when it is sane, so traces join up; else a fresh `req_…`. */
export function requestId(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === "string" && SANE.test(given) ? given : nextRequestId();
}

const RAW_REQUEST_ID = /^x-request-id:[ \t]*([^\r\n]*?)[ \t]*\r?$/im;

/**
 * The request id of a request the HTTP parser refused: the caller's X-Request-Id when it is
 * sane and among the bytes received, else a fresh one.
 */
export function requestIdFrom(raw: Buffer | undefined): string {
  const given = raw && RAW_REQUEST_ID.exec(raw.toString("latin1", 0, Math.min(raw.length, 64 * 1024)))?.[1];
  return given && SANE.test(given) ? given : nextRequestId();
}
