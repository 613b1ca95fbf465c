import type { IncomingMessage } from "node:http";
import { newId } from "@platform/kit/ids";

export const REQUEST_ID_HEADER = "x-request-id";

// A caller's id is echoed in headers and logs, so only a short, plain token is trusted.
const SANE = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's X-Request-Id when it is sane, so traces join up; else a fresh `req_…`. */
export function requestId(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === "string" && SANE.test(given) ? given : newId("req_");
}
