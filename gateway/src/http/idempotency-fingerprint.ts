import type { RequestFingerprint } from "@platform/kit/context";
import { hashRequest } from "@platform/kit/idempotency";
import type { FastifyRequest } from "fastify";
import type { RouteSpec } from "../route.js";

/** A short, stable hash: enough to tell two requests apart, small in the signed context. */
const short = (value: unknown) => hashRequest(value).slice(0, 22);

/**
 * What a write with an Idempotency-Key was, part by part, so that reusing the key for
 * another request can say what differed: the endpoint (method and path), the query string
 * (UTM parameters of a booking) or the body. Objects are hashed with sorted keys: the order
 * of fields or parameters does not make a request different.
 */
export function requestFingerprint(spec: RouteSpec, request: FastifyRequest): RequestFingerprint {
  return {
    target: short({ method: spec.method, operationId: spec.operationId, params: request.params ?? {} }),
    query: short(request.query ?? {}),
    body: short(request.body ?? null),
  };
}
