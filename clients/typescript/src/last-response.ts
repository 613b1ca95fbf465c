import type { ApiResponse } from "./types.js";

// What came with a successful answer, for calls that return only the body (like Stripe's
// `lastResponse`): kept beside the returned object, never on it, so the body's shape (its
// keys, its JSON, its type) is exactly the API's.

/** The answer a result came from, without its body. */
export type ResponseMeta = Omit<ApiResponse<unknown>, "data">;

const answers = new WeakMap<object, ResponseMeta>();

/** Returns the body of `response`, remembering the rest of the answer for `lastResponse`. */
export function remember(response: ApiResponse<unknown>): unknown {
  const { data, ...meta } = response;
  if (typeof data === "object" && data !== null) answers.set(data, meta);
  return data;
}

/**
 * The answer a result of this client came from: `requestId` (X-Request-Id, to quote to
 * support), `status`, `headers` (ETag, RateLimit-*), `replayed` and `attempts`. Undefined for
 * anything else, and for an answer without a body (204): use `client.send` for those.
 *
 * @example
 * const deal = await client.deals.get({ dealId });
 * console.log(lastResponse(deal)?.requestId);
 */
export function lastResponse(result: unknown): ResponseMeta | undefined {
  return typeof result === "object" && result !== null ? answers.get(result) : undefined;
}
